package io.iqstream.server.config;

import java.util.Locale;

/**
 * Every command-line flag of {@code iqstream serve}, with its environment twin, default and help. This enum is
 * the single place flags are declared: {@code --help}, the parser and docs/API.md follow it.
 */
public enum Flag {
    HOST("host", "0.0.0.0", "address to listen on"),
    PORT("port", "8080", "port to listen on (0 picks a free one)"),
    WORKERS("workers", "", "worker threads (event loops); a run lives on one of them (default: CPUs available)"),
    TRANSPORT("transport", "auto", "socket transport: auto, epoll, io_uring or nio (auto: epoll, else nio)"),
    AUTH("auth", "jwt", "jwt, or none to turn authorization off (loud warning; development only)"),
    JWT_SECRET("jwt-secret", "", "HS256/384/512 shared secret, UTF-8, at least 32 bytes (none given: dev mode)"),
    JWT_PUBLIC_KEY("jwt-public-key", "", "PEM file with an RS/ES/EdDSA public key"),
    JWKS("jwks", "", "JWK Set with RS/ES/EdDSA public keys, selected by kid: a file (re-read when it changes) or an "
            + "https:// URL (http:// only on loopback), fetched at start and refreshed in the background"),
    JWKS_TIMEOUT("jwks-timeout", "10s", "longest JWKS fetch; at start, how long to wait for a usable set before failing"),
    JWKS_REFRESH_MIN("jwks-refresh-min", "15s", "floor between JWKS fetches (Cache-Control max-age below it, and the "
            + "early refresh an unknown kid asks for, wait for it); a file is checked this often"),
    JWKS_REFRESH_MAX("jwks-refresh-max", "10m", "ceiling between JWKS fetches (used when the key server sends no "
            + "max-age)"),
    JWKS_MAX_AGE("jwks-max-age", "24h", "/readyz answers 503 once the last good JWK Set is older than this (key server "
            + "unreachable); tokens are still checked against it"),
    JWKS_CA("jwks-ca", "", "PEM file of the CA certificates to trust for an https --jwks (default: the JVM's trust "
            + "store)"),
    JWT_ISSUER("jwt-issuer", "", "required iss claim (default: not checked)"),
    JWT_AUDIENCE("jwt-audience", "", "required aud claim (default: not checked)"),
    RETENTION("retention", "60s", "how long an ended run stays readable"),
    TOMBSTONE("tombstone", "10m", "how long an expired run answers 410 Gone before 404"),
    AWAIT_RUN("await-run", "10s", "how long a subscriber waits for a run that does not exist yet"),
    PUBLISHER_TIMEOUT("publisher-timeout", "30s", "silence after a broken publish before RUN_ERROR PUBLISHER_LOST"),
    RUN_IDLE_TIMEOUT("run-idle-timeout", "5m", "an open run with no event for this long is ended (RUN_IDLE), "
            + "also while a publishing request is open (it gets 408 run_idle)"),
    MEMORY_BUDGET("memory-budget", "", "bytes for event logs, e.g. 512m or 2g (default: from the container)"),
    MAX_EVENT_BYTES("max-event-bytes", "1m", "largest event accepted (413 above)"),
    MAX_RUN_BYTES("max-run-bytes", "32m", "largest run accepted (413 above)"),
    COMPRESS_LOG("compress-log", "true", "pack full log segments with zlib (a run kept for a few tens of KiB)"),
    MAX_SUBSCRIBERS("max-subscribers", "", "subscriber connections held at once, 503 above (default: heap / 16 KiB)"),
    MAX_SUBSCRIBER_LAG("max-subscriber-lag", "30s", "a subscriber whose socket stays full this long is cut"),
    HEARTBEAT("heartbeat", "15s", "SSE comment interval on an idle stream"),
    RETRY("retry", "1000ms", "SSE retry: field sent to browsers"),
    RETRY_JITTER("retry-jitter", "1000ms", "each stream's retry: is --retry plus a random part of this, so the "
            + "browsers cut at once (a balancer restart) come back spread over it, not together (0: off; at most 60s)"),
    LISTEN_BACKLOG("listen-backlog", "4096", "connections the kernel queues for accept (a reconnect storm's burst); "
            + "capped by net.core.somaxconn, which the server warns about at start when it is lower (16 to 65535)"),
    DRAIN_TIMEOUT("drain-timeout", "60s", "how long SIGTERM waits for running runs to finish"),
    CORS_ORIGIN("cors-origin", "", "allowed browser origins, comma-separated, or * for any origin without "
            + "credentials: the iqstream_token cookie counts only with no Origin or one listed by name (default: none)"),
    HEADER_TIMEOUT("header-timeout", "10s", "a request's line and headers must arrive whole within this (else 408, closed)"),
    BODY_TIMEOUT("body-timeout", "30s", "a Durable Streams request's body must arrive whole within this of its head "
            + "(else 408, closed)"),
    IDLE_TIMEOUT("idle-timeout", "60s", "a keep-alive connection with no request in flight is closed after this"),
    MAX_CONNECTIONS("max-connections", "", "connections held at once; above it new ones are closed at once "
            + "(default: the process's file limit less a reserve)"),
    ADMIN_PORT("admin-port", "", "also serve /healthz, /readyz and /metrics on this port (keep it private; "
            + "default: off)"),
    ALLOW_TOKENS_WITHOUT_EXP("allow-tokens-without-exp", "false", "accept tokens that have no exp claim "
            + "(they never expire; without this flag they get 401, exp is required)"),
    PEERS("peers", "", "cluster members as host:port, comma-separated; each host is re-resolved every 0.5 s, so "
            + "one DNS name (a Kubernetes headless Service) lists every pod. Any node then serves any run, forwarding "
            + "to the node that holds it (default: off, a single node)"),
    ADVERTISE("advertise", "", "this node's own host:port as its peers reach it: an IP, as --peers resolves to, or "
            + "a host name, and then each --peers entry is one member by its name, never resolved (a StatefulSet's "
            + "pod names; one that is down stays a member); required with --peers"),
    CLUSTER_SECRET("cluster-secret", "", "shared secret (at least 32 bytes) that authenticates forwarded requests "
            + "between peers; required with --peers"),
    WARMUP("warmup", "6000", "requests the server makes to itself on a private loopback port before its main port "
            + "accepts (publishes, reads and resumes of made-up runs), so the JIT has compiled those paths before the "
            + "first client; a few seconds at start, at most 20 s (0: off)"),
    DEMO("demo", "false", "serve the demo chat page at /demo (always on in dev mode); POST /demo/api/runs needs no "
            + "token, so its runs have the quota below and at most 1/8 of the memory budget"),
    DEMO_MAX_RUNS("demo-max-runs", "32", "demo runs held at once, playing or kept for --demo-retention (429 above)"),
    DEMO_RATE("demo-rate", "60", "demo runs started per minute across all clients, in bursts of at most 10 (429 "
            + "above)"),
    DEMO_RETENTION("demo-retention", "30s", "how long an ended demo run stays readable before the demo deletes it"),
    DURABLE_STREAMS_OPEN("durable-streams-open", "false", "serve the Durable Streams protocol at /v1/stream/ with no "
            + "token (the conformance suite, local development); loopback --host only, said at start"),
    DURABLE_STREAMS_LONG_POLL("durable-streams-long-poll", "20s", "how long a Durable Streams long-poll (and an "
            + "idle SSE read, between control events) waits at the stream's tail"),
    SSE_LIFETIME("sse-lifetime", "0", "how long a Durable Streams SSE response lasts before the server ends it "
            + "and the client reconnects from its offset (0: until the stream closes or the client leaves; about 60s "
            + "behind a CDN, so readers collapse onto its edge requests; else at least 1s)"),
    DURABILITY("durability", "disk", "where durable streams are kept: disk (each in a file of --data-dir; an append "
            + "is answered once it is durable, and every stream is recovered at start) or memory (lost when the "
            + "process ends)"),
    DATA_DIR("data-dir", "iqstream-data", "the node's data directory (created if missing, relative to the working "
            + "directory; one per node, locked while a server uses it)"),
    FSYNC("fsync", "batch", "when an acknowledged write is flushed to the disk: batch (each batch of writes with one "
            + "flush per file: survives a crash of the machine), always (each write on its own), never (survives a "
            + "crash of the process, not of the machine)"),
    DISK_BUDGET("disk-budget", "", "what durable streams' files may take in --data-dir (e.g. 20g); past it a new "
            + "stream or an append is 507 and reads go on (default: what they take at start plus the file "
            + "system's free space, less 5% of its size and at least 64 MiB)"),
    COLD_AFTER("cold-after", "5s", "with --durability disk: a durable stream idle this long (no read, write or "
            + "live reader, no fork) drops its bytes from memory, kept by its file: a catch-up or a long-poll is read "
            + "from the file, an SSE read or a write loads them back first; a closed stream, idle a second (0: every "
            + "stream stays in memory)"),
    LOG_LEVEL("log-level", "info", "error, warn, info or debug (refused requests are logged at debug)"),
    LOG_FORMAT("log-format", "text", "text (one line per record) or json (one JSON object a line: time, level, "
            + "message, logger, run_id, stream_path, node, trace_id, span_id; tokens redacted as in text)");

    private final String name;
    private final String defaultValue;
    private final String help;

    Flag(String name, String defaultValue, String help) {
        this.name = name;
        this.defaultValue = defaultValue;
        this.help = help;
    }

    /** The flag as typed: {@code --jwt-secret}. */
    public String flag() {
        return "--" + name;
    }

    /** The environment twin: {@code IQSTREAM_JWT_SECRET}. */
    public String env() {
        return "IQSTREAM_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    public String defaultValue() {
        return defaultValue;
    }

    public String help() {
        return help;
    }

    /** Whether the flag may be given without a value ({@code --demo}). */
    public boolean isSwitch() {
        return this == DEMO || this == COMPRESS_LOG || this == ALLOW_TOKENS_WITHOUT_EXP || this == DURABLE_STREAMS_OPEN;
    }

    static Flag byName(String flag) {
        for (Flag f : values()) {
            if (f.flag().equals(flag)) {
                return f;
            }
        }
        return null;
    }
}
