package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 8, item 1: connections that cost the attacker nothing and the server a socket each — idle ones, slowloris
 * heads, and more than the server can hold — are closed by {@code --idle-timeout}, {@code --header-timeout} and
 * {@code --max-connections}, while /healthz keeps answering (on the admin port when the main one is full) and an
 * honest run streams whole. No token is used by any attacker. Sizes fit CI: hundreds of sockets, not thousands.
 */
class HostileConnectionsTest {
    private static final int IDLE = 150;
    private static final int SLOWLORIS = 100;
    private static final int MAX_CONNECTIONS = 200;
    private static final int OVER = 200;

    @Test
    void idleConnectionsAreClosedByIdleAndHeaderTimeouts() throws Exception {
        try (HostileServer server = HostileServer.start("--idle-timeout", "1s", "--header-timeout", "2s");
                AttackWindow w = AttackWindow.open(server)) {
            List<Socket> sockets = new ArrayList<>();
            try {
                for (int i = 0; i < IDLE; i++) {
                    Socket kept = RawHttp.connect(server.port());
                    RawHttp.write(kept, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
                    assertEquals(200, RawHttp.read(kept, 5_000).status());
                    sockets.add(kept);
                    sockets.add(RawHttp.connect(server.port()));
                }
                int closed = countClosed(sockets, 10_000);
                assertEquals(sockets.size(), closed, "idle connections closed within 10 s ("
                        + IDLE + " kept alive after a request, " + IDLE + " that never sent a byte)");
            } finally {
                closeAll(sockets);
            }
            w.assertSurvived();
        }
    }

    @Test
    void slowlorisHeadersAreCut408ByHeaderTimeout() throws Exception {
        try (HostileServer server = HostileServer.start("--header-timeout", "1s");
                AttackWindow w = AttackWindow.open(server);
                ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<String>> outcomes = new ArrayList<>();
            for (int i = 0; i < SLOWLORIS; i++) {
                outcomes.add(pool.submit(() -> slowloris(server.port())));
            }
            List<String> wrong = new ArrayList<>();
            for (Future<String> f : outcomes) {
                String outcome = f.get(30, TimeUnit.SECONDS);
                if (!outcome.equals("408 header_timeout, closed")) {
                    wrong.add(outcome);
                }
            }
            assertTrue(wrong.isEmpty(), wrong.size() + " of " + SLOWLORIS + " slowloris sockets were not cut with 408: "
                    + wrong.subList(0, Math.min(3, wrong.size())));
            w.assertSurvived();
        }
    }

    @Test
    void connectionsAboveMaxAreClosedAtOnceWhileAdminHealthAnswers() throws Exception {
        // the connections held within the limit send nothing: the header timeout, set far past the wait below,
        // leaves them open, so the sockets closed are those refused at accept, counted, not timed
        try (HostileServer server = HostileServer.startWithAdminPort("--max-connections",
                String.valueOf(MAX_CONNECTIONS), "--header-timeout", "10m");
                AttackWindow w = AttackWindow.openWatchingAdminOnly(server)) {
            List<Socket> sockets = new ArrayList<>();
            try {
                for (int i = 0; i < MAX_CONNECTIONS + OVER; i++) {
                    sockets.add(RawHttp.connect(server.port()));
                }
                int closed = countClosed(sockets, 15_000);
                assertTrue(closed >= OVER - 10 && closed <= OVER + 10, closed + " of " + sockets.size()
                        + " connections closed at once with --max-connections " + MAX_CONNECTIONS
                        + " (about " + OVER + " expected)");
                long refused = server.metric("iqstream_connections_refused_total{reason=\"max_connections\"}");
                assertTrue(refused >= OVER - 10, "iqstream_connections_refused_total is " + refused);
                assertTrue(server.metric("iqstream_connections_open") >= 0, "iqstream_connections_open exported");
            } finally {
                closeAll(sockets);
            }
            RawHttp.Response main = RawHttp.get(server.port(), "/healthz");
            assertEquals(200, main.status(), "the main port serves again once the flood is gone");
            w.assertSurvived();
        }
    }

    /** Sends a request head one byte every 200 ms; returns what the server did about it. */
    private static String slowloris(int port) {
        byte[] head = ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + "a".repeat(200) + "\r\n\r\n")
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        try (Socket s = RawHttp.connect(port); ExecutorService reader = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<RawHttp.Response> answer = reader.submit(() -> RawHttp.read(s, 10_000));
            for (int i = 0; i < head.length - 4 && !answer.isDone(); i++) {
                try {
                    s.getOutputStream().write(head[i]);
                    s.getOutputStream().flush();
                } catch (IOException e) {
                    break;
                }
                Thread.sleep(200);
            }
            RawHttp.Response r = answer.get(15, TimeUnit.SECONDS);
            boolean closed = RawHttp.awaitClosed(s, 5_000);
            return r.status() + " " + r.error() + (closed ? ", closed" : ", left open");
        } catch (Exception | AssertionError e) {
            return e.toString();
        }
    }

    /** Counts, in parallel, the sockets the server closes within {@code timeoutMs}. */
    private static int countClosed(List<Socket> sockets, long timeoutMs) throws Exception {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Boolean>> closed = new ArrayList<>();
            for (Socket s : sockets) {
                closed.add(pool.submit(() -> RawHttp.awaitClosed(s, timeoutMs)));
            }
            int n = 0;
            for (Future<Boolean> f : closed) {
                n += f.get() ? 1 : 0;
            }
            return n;
        }
    }

    private static void closeAll(List<Socket> sockets) {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }
}
