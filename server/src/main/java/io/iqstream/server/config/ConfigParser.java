package io.iqstream.server.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Builds a {@link ServerConfig} from flags, then {@code IQSTREAM_*} environment variables, then defaults (a flag
 * beats its environment twin). Every value is validated here; a bad one is a {@link ConfigException} naming the
 * flag and the environment variable.
 */
public final class ConfigParser {
    /** Longest duration any flag takes: timers are kept in nanoseconds, and a week is beyond any sane setting. */
    static final long MAX_DURATION_MS = 7L * 24 * 3_600_000;

    private ConfigParser() {}

    /** Parses {@code args} (flags after {@code serve}) with {@code env} as the environment. */
    public static ServerConfig parse(String[] args, Map<String, String> env) {
        EnumMap<Flag, String> values = new EnumMap<>(Flag.class);
        for (Flag f : Flag.values()) {
            String e = env.get(f.env());
            if (e != null && !e.isEmpty()) {
                values.put(f, e);
            }
        }
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String name = a;
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                name = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            Flag f = Flag.byName(name);
            if (f == null) {
                throw new ConfigException("unknown flag '" + a + "' (see --help)");
            }
            if (value == null) {
                if (f.isSwitch() && (i + 1 >= args.length || args[i + 1].startsWith("--"))) {
                    value = "true";
                } else if (i + 1 >= args.length) {
                    throw new ConfigException(f.flag() + " needs a value (see --help)");
                } else {
                    value = args[++i];
                }
            }
            values.put(f, value);
        }
        return build(values, TracingEnvironment.asksForTraces(env));
    }

    private static String get(EnumMap<Flag, String> v, Flag f) {
        String s = v.get(f);
        return s == null ? f.defaultValue() : s;
    }

    private static ServerConfig build(EnumMap<Flag, String> v, boolean tracing) {
        String host = get(v, Flag.HOST);
        int port = (int) intIn(v, Flag.PORT, 0, 65535);
        String workersText = get(v, Flag.WORKERS);
        int workers = workersText.isEmpty() ? Runtime.getRuntime().availableProcessors()
                : (int) intIn(v, Flag.WORKERS, 1, 1024);
        String transport = get(v, Flag.TRANSPORT);
        if (!List.of("auto", "epoll", "io_uring", "nio").contains(transport)) {
            throw bad(Flag.TRANSPORT, transport, "one of auto, epoll, io_uring, nio");
        }
        String auth = get(v, Flag.AUTH);
        if (!auth.equals("jwt") && !auth.equals("none")) {
            throw bad(Flag.AUTH, auth, "jwt or none");
        }
        String secret = emptyToNull(get(v, Flag.JWT_SECRET));
        Path pem = pathOrNull(v, Flag.JWT_PUBLIC_KEY);
        String jwksText = emptyToNull(get(v, Flag.JWKS));
        URI jwksUrl = jwksText != null && jwksText.contains("://") ? jwksUrl(jwksText) : null;
        Path jwks = jwksUrl == null ? pathOrNull(v, Flag.JWKS) : null;
        int keySources = (secret != null ? 1 : 0) + (pem != null ? 1 : 0) + (jwks != null || jwksUrl != null ? 1 : 0);
        if (keySources > 1) {
            throw new ConfigException("give one of --jwt-secret, --jwt-public-key, --jwks, not several");
        }
        long maxEvent = bytes(v, Flag.MAX_EVENT_BYTES);
        long maxRun = bytes(v, Flag.MAX_RUN_BYTES);
        if (maxEvent < 64 || maxEvent > ServerConfig.MAX_EVENT_BYTES_LIMIT) {
            throw bad(Flag.MAX_EVENT_BYTES, get(v, Flag.MAX_EVENT_BYTES), "from 64 bytes to 64m");
        }
        if (maxRun > ServerConfig.MAX_RUN_BYTES_LIMIT) {
            throw bad(Flag.MAX_RUN_BYTES, get(v, Flag.MAX_RUN_BYTES), "at most 1g");
        }
        if (maxRun < maxEvent) {
            throw new ConfigException("--max-run-bytes must be at least --max-event-bytes");
        }
        String budgetText = get(v, Flag.MEMORY_BUDGET);
        long budget = budgetText.isEmpty() ? 0 : bytes(v, Flag.MEMORY_BUDGET);
        if (!budgetText.isEmpty() && budget < 64 * 1024) {
            throw bad(Flag.MEMORY_BUDGET, budgetText, "at least 64k");
        }
        List<String> cors = new ArrayList<>();
        for (String o : get(v, Flag.CORS_ORIGIN).split(",")) {
            if (!o.isBlank()) {
                cors.add(o.trim());
            }
        }
        String demo = get(v, Flag.DEMO);
        if (!demo.equals("true") && !demo.equals("false")) {
            throw bad(Flag.DEMO, demo, "true or false");
        }
        DemoSettings demoSettings = new DemoSettings(demo.equals("true"), (int) intIn(v, Flag.DEMO_MAX_RUNS, 1, 100_000),
                (int) intIn(v, Flag.DEMO_RATE, 1, 1_000_000), positiveMs(v, Flag.DEMO_RETENTION, 0));
        String compress = get(v, Flag.COMPRESS_LOG);
        if (!compress.equals("true") && !compress.equals("false")) {
            throw bad(Flag.COMPRESS_LOG, compress, "true or false");
        }
        String durableOpen = get(v, Flag.DURABLE_STREAMS_OPEN);
        if (!durableOpen.equals("true") && !durableOpen.equals("false")) {
            throw bad(Flag.DURABLE_STREAMS_OPEN, durableOpen, "true or false");
        }
        if (durableOpen.equals("true") && !isLoopback(host)) {
            throw new ConfigException("--durable-streams-open serves /v1/stream/ with no token: it needs a loopback "
                    + "--host (127.0.0.1, ::1 or localhost), not " + host);
        }
        String noExp = get(v, Flag.ALLOW_TOKENS_WITHOUT_EXP);
        if (!noExp.equals("true") && !noExp.equals("false")) {
            throw bad(Flag.ALLOW_TOKENS_WITHOUT_EXP, noExp, "true or false");
        }
        int maxConnections = get(v, Flag.MAX_CONNECTIONS).isEmpty() ? 0
                : (int) intIn(v, Flag.MAX_CONNECTIONS, 1, 10_000_000);
        int adminPort = get(v, Flag.ADMIN_PORT).isEmpty() ? ServerConfig.NO_ADMIN_PORT
                : (int) intIn(v, Flag.ADMIN_PORT, 0, 65535);
        if (adminPort > 0 && adminPort == port) {
            throw bad(Flag.ADMIN_PORT, get(v, Flag.ADMIN_PORT), "a port other than --port");
        }
        long jwksTimeout = positiveMs(v, Flag.JWKS_TIMEOUT, 100);
        long refreshMin = positiveMs(v, Flag.JWKS_REFRESH_MIN, 1_000);
        long refreshMax = positiveMs(v, Flag.JWKS_REFRESH_MAX, 1_000);
        long jwksMaxAge = positiveMs(v, Flag.JWKS_MAX_AGE, 1_000);
        if (refreshMax < refreshMin) {
            throw new ConfigException("--jwks-refresh-max (" + get(v, Flag.JWKS_REFRESH_MAX)
                    + ") must be at least --jwks-refresh-min (" + get(v, Flag.JWKS_REFRESH_MIN) + ")");
        }
        if (jwksMaxAge <= refreshMax) {
            throw new ConfigException("--jwks-max-age (" + get(v, Flag.JWKS_MAX_AGE) + ") must be longer than"
                    + " --jwks-refresh-max (" + get(v, Flag.JWKS_REFRESH_MAX) + "), or a healthy key set would"
                    + " count as stale between two refreshes");
        }
        Path jwksCa = pathOrNull(v, Flag.JWKS_CA);
        if (jwksCa != null && (jwksUrl == null || !jwksUrl.getScheme().equals("https"))) {
            throw new ConfigException("--jwks-ca is for an https:// --jwks URL; --jwks is '"
                    + (jwksText == null ? "" : jwksText) + "'");
        }
        String level = get(v, Flag.LOG_LEVEL);
        if (!Arrays.asList("error", "warn", "info", "debug", "trace").contains(level)) {
            throw bad(Flag.LOG_LEVEL, level, "error, warn, info or debug");
        }
        String logFormat = get(v, Flag.LOG_FORMAT);
        if (!logFormat.equals("text") && !logFormat.equals("json")) {
            throw bad(Flag.LOG_FORMAT, logFormat, "text or json");
        }
        List<String> peers = new ArrayList<>();
        for (String peer : get(v, Flag.PEERS).split(",")) {
            if (!peer.isBlank()) {
                peers.add(hostPort(Flag.PEERS, peer.trim()));
            }
        }
        String advertise = emptyToNull(get(v, Flag.ADVERTISE));
        String clusterSecret = emptyToNull(get(v, Flag.CLUSTER_SECRET));
        if (!peers.isEmpty()) {
            if (advertise == null) {
                throw new ConfigException("--peers needs --advertise (this node's host:port as its peers reach it)");
            }
            hostPort(Flag.ADVERTISE, advertise);
            if (clusterSecret == null || clusterSecret.getBytes(StandardCharsets.UTF_8).length < 32) {
                throw new ConfigException("--peers needs --cluster-secret of at least 32 bytes (forwarded requests "
                        + "are authenticated with it)");
            }
        } else if (advertise != null || clusterSecret != null) {
            throw new ConfigException("--advertise and --cluster-secret are for a cluster: give --peers too");
        }
        return new ServerConfig(host, port, workers, transport, auth.equals("jwt"), secret, pem, jwks,
                emptyToNull(get(v, Flag.JWT_ISSUER)), emptyToNull(get(v, Flag.JWT_AUDIENCE)),
                positiveMs(v, Flag.RETENTION, 0), positiveMs(v, Flag.TOMBSTONE, 0),
                positiveMs(v, Flag.AWAIT_RUN, 0), positiveMs(v, Flag.PUBLISHER_TIMEOUT, 1),
                positiveMs(v, Flag.RUN_IDLE_TIMEOUT, 1), budget, maxEvent, maxRun,
                get(v, Flag.MAX_SUBSCRIBERS).isEmpty() ? 0 : (int) intIn(v, Flag.MAX_SUBSCRIBERS, 1, 10_000_000),
                positiveMs(v, Flag.MAX_SUBSCRIBER_LAG, 1), compress.equals("true"), positiveMs(v, Flag.HEARTBEAT, 10),
                positiveMs(v, Flag.RETRY, 0), positiveMs(v, Flag.DRAIN_TIMEOUT, 0), List.copyOf(cors),
                demoSettings, level, positiveMs(v, Flag.HEADER_TIMEOUT, 100),
                positiveMs(v, Flag.BODY_TIMEOUT, 100), positiveMs(v, Flag.IDLE_TIMEOUT, 100), maxConnections,
                adminPort, noExp.equals("true"),
                jwksUrl, jwksTimeout, refreshMin, refreshMax, jwksMaxAge, jwksCa, List.copyOf(peers), advertise,
                clusterSecret, (int) intIn(v, Flag.WARMUP, 0, 1_000_000), durableOpen.equals("true"),
                positiveMs(v, Flag.DURABLE_STREAMS_LONG_POLL, 10), sseLifetimeMs(v), storage(v),
                logFormat.equals("json"), tracing, storm(v));
    }

    /** {@code --sse-lifetime}: 0 (no end of its own), or at least 1 s. */
    private static long sseLifetimeMs(EnumMap<Flag, String> v) {
        long ms = positiveMs(v, Flag.SSE_LIFETIME, 0);
        if (ms != 0 && ms < 1_000) {
            throw bad(Flag.SSE_LIFETIME, get(v, Flag.SSE_LIFETIME), "0 (no end) or at least 1s");
        }
        return ms;
    }

    private static StormSettings storm(EnumMap<Flag, String> v) {
        long jitterMs = positiveMs(v, Flag.RETRY_JITTER, 0);
        if (jitterMs > StormSettings.MAX_RETRY_JITTER_MS) {
            throw bad(Flag.RETRY_JITTER, get(v, Flag.RETRY_JITTER), "at most 60s");
        }
        return new StormSettings(jitterMs, (int) intIn(v, Flag.LISTEN_BACKLOG, 16, 65_535));
    }

    private static StorageSettings storage(EnumMap<Flag, String> v) {
        String durability = get(v, Flag.DURABILITY);
        if (!durability.equals("disk") && !durability.equals("memory")) {
            throw bad(Flag.DURABILITY, durability, "disk or memory");
        }
        String fsync = get(v, Flag.FSYNC);
        if (!fsync.equals("batch") && !fsync.equals("always") && !fsync.equals("never")) {
            throw bad(Flag.FSYNC, fsync, "batch, always or never");
        }
        String dir = get(v, Flag.DATA_DIR);
        if (dir.isBlank()) {
            throw bad(Flag.DATA_DIR, dir, "a directory");
        }
        try {
            String budget = get(v, Flag.DISK_BUDGET);
            long diskBudget = budget.isEmpty() ? 0 : bytes(v, Flag.DISK_BUDGET);
            if (!budget.isEmpty() && diskBudget < 64 * 1024) {
                throw bad(Flag.DISK_BUDGET, budget, "at least 64k");
            }
            return new StorageSettings(durability.equals("disk"), java.nio.file.Path.of(dir), fsync, diskBudget,
                    positiveMs(v, Flag.COLD_AFTER, 0));
        } catch (java.nio.file.InvalidPathException e) {
            throw bad(Flag.DATA_DIR, dir, "a directory");
        }
    }

    /** Whether a --host value listens on loopback only. */
    static boolean isLoopback(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return h.equalsIgnoreCase("localhost") || h.equals("::1") || h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    }

    /** {@code host:port} with a port from 1 to 65535, returned as given; anything else names the flag. */
    private static String hostPort(Flag flag, String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw bad(flag, text, "host:port");
        }
        try {
            int p = Integer.parseInt(text.substring(colon + 1));
            if (p < 1 || p > 65535) {
                throw bad(flag, text, "host:port with a port from 1 to 65535");
            }
        } catch (NumberFormatException e) {
            throw bad(flag, text, "host:port");
        }
        return text;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /** An https URL, or http on a loopback address; anything else names the flag. */
    private static URI jwksUrl(String text) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw bad(Flag.JWKS, text, "a file or an https:// URL (" + e.getMessage() + ")");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        String host = uri.getHost() == null ? "" : uri.getHost();
        boolean loopback = host.equalsIgnoreCase("localhost") || host.equals("[::1]") || host.equals("::1")
                || host.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
        if (scheme.equals("https") && !host.isEmpty() || scheme.equals("http") && loopback) {
            return uri;
        }
        throw bad(Flag.JWKS, text, "a file or an https:// URL (http:// only for a loopback address such as 127.0.0.1)");
    }

    private static Path pathOrNull(EnumMap<Flag, String> v, Flag f) {
        String s = emptyToNull(get(v, f));
        if (s == null) {
            return null;
        }
        Path p = Path.of(s);
        if (!Files.isReadable(p)) {
            throw bad(f, s, "a readable file");
        }
        return p;
    }

    private static long intIn(EnumMap<Flag, String> v, Flag f, long min, long max) {
        String s = get(v, f);
        try {
            long n = Long.parseLong(s.trim());
            if (n < min || n > max) {
                throw bad(f, s, "a number from " + min + " to " + max);
            }
            return n;
        } catch (NumberFormatException e) {
            throw bad(f, s, "a number from " + min + " to " + max);
        }
    }

    private static long positiveMs(EnumMap<Flag, String> v, Flag f, long minMs) {
        String s = get(v, f);
        long ms;
        try {
            ms = Quantities.parseDurationMs(s);
        } catch (ConfigException e) {
            throw bad(f, s, "a duration such as 250ms, 60s or 5m");
        }
        if (ms < minMs) {
            throw bad(f, s, "at least " + minMs + "ms");
        }
        if (ms > MAX_DURATION_MS) {
            throw bad(f, s, "at most 7d (" + MAX_DURATION_MS / 60_000 + "m)");
        }
        return ms;
    }

    private static long bytes(EnumMap<Flag, String> v, Flag f) {
        String s = get(v, f);
        try {
            return Quantities.parseBytes(s);
        } catch (ConfigException e) {
            throw bad(f, s, "a size such as 512k, 1m or 2g");
        }
    }

    private static ConfigException bad(Flag f, String value, String expected) {
        return new ConfigException(f.flag() + " (or " + f.env() + ") is '" + value + "': expected " + expected);
    }

    /** The text of {@code iqstream serve --help}. */
    public static String help() {
        StringBuilder sb = new StringBuilder();
        sb.append("Usage: iqstream serve [flags]\n\n")
                .append("IQ-Stream relays AI agent runs: backends POST AG-UI events to /v1/runs/{runId}/events,\n")
                .append("browsers read them as Server-Sent Events and resume with Last-Event-ID.\n\n")
                .append("Flags (each also read from its environment variable; a flag wins):\n");
        for (Flag f : Flag.values()) {
            String def = f.defaultValue().isEmpty() ? "" : " (default " + f.defaultValue() + ")";
            sb.append(String.format("  %-22s %-30s %s%s%n", f.flag() + (f.isSwitch() ? "" : " V"), f.env(),
                    f.help(), def));
        }
        sb.append("\nDurations take ms, s, m, h; sizes take k, m, g. With no key configured the server starts in\n")
                .append("development mode: it generates a secret and prints ready tokens and curl commands.\n")
                .append("Traces (OpenTelemetry) are off unless OTEL_TRACES_EXPORTER names an exporter or\n")
                .append("OTEL_EXPORTER_OTLP_ENDPOINT is set; the OTEL_* variables configure them (docs/OPERATIONS.md).\n")
                .append("Docs: docs/API.md, docs/OPERATIONS.md, docs/ARCHITECTURE.md.\n");
        return sb.toString();
    }
}
