package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.ServerProcess;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server in its own JVM under a small file limit ({@code ulimit -n 512}), flooded with idle connections: the
 * default cap keeps it below the limit and the admin port answers; and even with a cap set above the limit, accept
 * failing with "Too many open files" does not stop the acceptor for good.
 */
class FileLimitTest {
    private static final int FILE_LIMIT = 512;
    private static final int FLOOD = 600;

    @Test
    void defaultCapKeepsTheProcessBelowItsFileLimit() throws Exception {
        try (ServerProcess server = ServerProcess.start(FILE_LIMIT, "--admin-port", "0")) {
            int cap = defaultCap(server);
            assertTrue(cap < FILE_LIMIT - 64, "cap " + cap + " leaves a reserve");
            String admin = "http://127.0.0.1:" + server.adminPort();
            warmUp(server, admin);
            List<Socket> flood = new ArrayList<>();
            try {
                for (int i = 0; i < FLOOD; i++) {
                    flood.add(new Socket("127.0.0.1", server.port()));
                }
                // every slot taken (the warm-up's kept-alive client may hold one), the rest refused and counted
                assertEquals(cap, awaitMetric(admin, "iqstream_connections_open ", n -> n == cap));
                long refused = awaitMetric(admin, "iqstream_connections_refused_total{reason=\"max_connections\"} ",
                        n -> n >= FLOOD - cap);
                assertTrue(refused >= FLOOD - cap && refused <= FLOOD, refused + " refused; " + server.output());
                assertEquals(200, Http.get(admin + "/healthz").statusCode(), "the admin port answers meanwhile");
                assertTrue(!server.output().contains("Too many open files"), server.output());
            } finally {
                closeAll(flood);
            }
            assertEquals(200, healthzOnANewConnection(server), "slots are given back: " + server.output());
        }
    }

    @Test
    void acceptorSurvivesTooManyOpenFiles() throws Exception {
        try (ServerProcess server = ServerProcess.start(FILE_LIMIT, "--max-connections", "10000")) {
            warmUp(server, "http://127.0.0.1:" + server.port());
            List<Socket> flood = new ArrayList<>();
            try {
                // connects complete in the kernel's backlog even when accept fails with EMFILE
                for (int i = 0; i < FLOOD; i++) {
                    flood.add(new Socket("127.0.0.1", server.port()));
                }
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (!server.output().contains("Too many open files") && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertTrue(server.output().contains("Too many open files"), "the file limit was met: "
                        + server.output());
            } finally {
                closeAll(flood);
            }
            // once the flood is gone, the same acceptor takes connections again
            assertEquals(200, healthzOnANewConnection(server), server.output());
            assertTrue(server.isAlive());
        }
    }

    /** GET /healthz on a fresh connection, retried (a refused one is closed) for up to 20 s; the last status. */
    private static int healthzOnANewConnection(ServerProcess server) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        int status = -1;
        while (status != 200 && System.nanoTime() < deadline) {
            try (RawHttp conn = new RawHttp(server.port())) {
                conn.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
                status = conn.readReply().status();
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        return status;
    }

    /**
     * Serves each path once before the flood. Under EMFILE a class loaded for the first time from a directory
     * (target/classes here; the release is one jar, held open) cannot be read, and the JVM fails it for good.
     */
    private static void warmUp(ServerProcess server, String ops) throws Exception {
        assertEquals(200, Http.get("http://127.0.0.1:" + server.port() + "/healthz").statusCode());
        assertEquals(200, Http.get(ops + "/metrics").statusCode());
        try (RawHttp conn = new RawHttp(server.port())) {
            conn.send("GET /healthz%ZZ HTTP/1.1\r\nHost: x\r\n\r\n");
            assertEquals(400, conn.readReply().status());
        }
    }

    private static int defaultCap(ServerProcess server) {
        Matcher m = Pattern.compile("max (\\d+) connections").matcher(server.output());
        assertTrue(m.find(), server.output());
        return Integer.parseInt(m.group(1));
    }

    /** The metric's value once {@code done} accepts it, or its last value after 20 s. */
    private static long awaitMetric(String admin, String prefix, LongPredicate done) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        long value = -1;
        while (System.nanoTime() < deadline) {
            for (String line : Http.get(admin + "/metrics").body().split("\n")) {
                if (line.startsWith(prefix)) {
                    value = Long.parseLong(line.substring(prefix.length()));
                }
            }
            if (done.test(value)) {
                break;
            }
            Thread.sleep(20);
        }
        return value;
    }

    private static void closeAll(List<Socket> sockets) throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
    }
}
