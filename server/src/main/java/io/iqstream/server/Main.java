package io.iqstream.server;

import io.iqstream.server.auth.DevCredentials;
import io.iqstream.server.config.ConfigException;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.log.JsonLogStream;
import java.security.Security;
import java.util.Arrays;

/** {@code iqstream serve [flags]}: parses flags, starts the server, prints where it listens, drains on SIGTERM. */
public final class Main {
    public static final String VERSION = BuildInfo.VERSION;

    private Main() {}

    public static void main(String[] args) throws Exception {
        String[] rest = args;
        if (args.length > 0 && args[0].equals("serve")) {
            rest = Arrays.copyOfRange(args, 1, args.length);
        } else if (args.length > 0 && (args[0].equals("--version") || args[0].equals("version"))) {
            System.out.println(BuildInfo.describe());
            return;
        } else if (args.length == 0 || !args[0].startsWith("--")) {
            System.out.print(ConfigParser.help());
            System.exit(args.length == 0 || args[0].equals("help") ? 0 : 2);
            return;
        }
        if (Arrays.asList(rest).contains("--help") || Arrays.asList(rest).contains("-h")) {
            System.out.print(ConfigParser.help());
            return;
        }
        ServerConfig config;
        try {
            config = ConfigParser.parse(rest, System.getenv());
        } catch (ConfigException e) {
            System.err.println("iqstream: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (config.clustered() && Security.getProperty("networkaddress.cache.ttl") == null) {
            // peers are re-resolved every 0.5 s, and a pod that comes back has a new address: the JDK would keep a
            // name's answer for 30 s and a failed lookup for 10 s (set before the first lookup, or it is not read)
            Security.setProperty("networkaddress.cache.ttl", "1");
            Security.setProperty("networkaddress.cache.negative.ttl", "1");
        }
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", config.logLevel());
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSZ");
        System.setProperty("org.slf4j.simpleLogger.log.io.netty", "warn");
        DevCredentials dev = null;
        if (config.devMode()) {
            dev = DevCredentials.generate();
            config = config.withJwtSecret(dev.secret());
        }
        if (!config.authEnabled()) {
            System.err.println("""
                    ********************************************************************
                    WARNING: --auth none: AUTHORIZATION IS OFF. Anyone who can reach this
                    port can publish to and read every run. Development use only.
                    ********************************************************************""");
        }
        if (config.jsonLogs()) {
            // from here on, what the logger writes to standard error is one JSON object a line
            JsonLogStream.install(config.advertise() != null ? config.advertise()
                    : config.host() + ":" + config.port());
        }
        IqStreamServer server;
        try {
            server = IqStreamServer.start(config, config.demo().enabled() || dev != null);
        } catch (StartupFailure e) {
            System.err.println("iqstream: " + e.getMessage());
            System.exit(2);
            return;
        } catch (IllegalArgumentException e) {
            System.err.println("iqstream: " + StartupFailure.forConfigProblem(e, config));
            System.exit(2);
            return;
        } catch (RuntimeException e) {
            System.err.println("iqstream: could not start: " + StartupFailure.oneLine(e));
            System.exit(1);
            return;
        }
        String shownHost = config.host().equals("0.0.0.0") || config.host().equals("::") ? "127.0.0.1"
                : config.host();
        String base = "http://" + shownHost + ":" + server.port();
        if (dev != null) {
            printDevMode(dev, base);
        }
        System.out.println("iqstream " + VERSION + " listening on " + base + " (" + server.transportName() + ", "
                + config.workers() + " workers, max " + server.maxConnections() + " connections)");
        if (server.adminPort() != ServerConfig.NO_ADMIN_PORT) {
            System.out.println("iqstream: admin port (/healthz, /readyz, /metrics) on http://" + shownHost + ":"
                    + server.adminPort());
        }
        System.out.flush();
        long drainMs = config.drainTimeoutMs();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("iqstream: draining (up to " + drainMs + " ms)");
            try {
                server.drain(drainMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server.close();
            System.out.println("iqstream: stopped");
        }, "iqstream-drain"));
        Thread.currentThread().join();
    }

    /**
     * The development-mode banner: the secret and tokens as {@code export} lines to paste once per terminal, then
     * short commands that use them and make a fresh run id each time they are pasted. {@code DevModeTest} runs them.
     */
    private static void printDevMode(DevCredentials dev, String base) {
        System.out.println("""
                
                IQ-Stream is in DEVELOPMENT MODE: no --jwt-secret, --jwt-public-key or --jwks was given,
                so it made a random secret for this process. Tokens below are valid for 24 hours.
                
                Paste once in each terminal (PUB may publish and read every run and list any thread's runs,
                SUB may read every run; SECRET signs tokens of your own, see docs/API.md#authorization):
                  export IQ='%s'
                  export SECRET='%s'
                  export PUB='%s'
                  export SUB='%s'
                
                Try it (a reader in the background, then a publisher; paste again for another run):
                  RUN=hello-$(date +%%s)-$RANDOM
                  curl -sS -N -H "Authorization: Bearer $SUB" "$IQ/v1/runs/$RUN/events" &
                  { printf '{"type":"RUN_STARTED","threadId":"t1","runId":"%%s"}\\n' "$RUN"
                    printf '%%s\\n' '{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}' \\
                      '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello, world"}' \\
                      '{"type":"TEXT_MESSAGE_END","messageId":"m1"}'
                    printf '{"type":"RUN_FINISHED","threadId":"t1","runId":"%%s"}\\n' "$RUN"; } \\
                  | curl -sS -X POST -H "Authorization: Bearer $PUB" -H 'Content-Type: application/x-ndjson' \\
                      --data-binary @- "$IQ/v1/runs/$RUN/events"; wait
                (In two terminals: the same RUN=... in both, the curl -N line in one, the rest in the other
                within --await-run, 10 s: a reader waits that long for a run that does not exist yet.)
                
                Demo chat page: %s/demo
                """.formatted(base, dev.secret(), dev.publisherToken(), dev.subscriberToken(), base));
    }
}
