package io.iqstream.server.testing;

import io.iqstream.server.IqStreamServer;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.ServerConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** A real server on an ephemeral loopback port, for integration tests. */
public final class TestServer implements AutoCloseable {
    public static final String SECRET = "test-secret-0123456789-abcdefghijklmnop";

    private final IqStreamServer server;

    private TestServer(IqStreamServer server) {
        this.server = server;
    }

    /**
     * Starts with test defaults (loopback, port 0, 2 workers, the test secret, durable streams in memory: a test of
     * the disk passes {@code --durability disk} and its own {@code --data-dir}) overridden by {@code flags}.
     */
    public static TestServer start(String... flags) {
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0", "--workers", "2",
                "--jwt-secret", SECRET, "--await-run", "2s", "--warmup", "0", "--durability", "memory"));
        args.addAll(Arrays.asList(flags));
        ServerConfig config = ConfigParser.parse(dedupe(args), Map.of());
        try {
            return new TestServer(IqStreamServer.start(config));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String[] dedupe(List<String> args) {
        // later flags win: drop an earlier occurrence of a flag given again
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i += 2) {
            String flag = args.get(i);
            boolean later = false;
            for (int j = i + 2; j < args.size(); j += 2) {
                if (args.get(j).equals(flag)) {
                    later = true;
                }
            }
            if (flag.equals("--jwt-secret") && args.subList(i + 2, args.size()).stream()
                    .anyMatch(a -> a.equals("--jwt-public-key") || a.equals("--jwks"))) {
                later = true;
            }
            if (!later) {
                out.add(flag);
                out.add(args.get(i + 1));
            }
        }
        return out.toArray(new String[0]);
    }

    public int port() {
        return server.port();
    }

    public String base() {
        return "http://127.0.0.1:" + server.port();
    }

    public IqStreamServer server() {
        return server;
    }

    @Override
    public void close() {
        server.close();
    }
}
