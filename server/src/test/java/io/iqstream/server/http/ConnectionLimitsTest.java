package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;

/** Hostile connections against the real server: slowloris, idle keep-alive, connection floods. */
class ConnectionLimitsTest {
    @Test
    void slowlorisIsCutByTheHeaderTimeout() throws Exception {
        try (TestServer server = TestServer.start("--header-timeout", "500ms");
                RawHttp slow = new RawHttp(server.port())) {
            AtomicBoolean open = new AtomicBoolean(true);
            Thread trickle = new Thread(() -> {
                String head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(10_000);
                for (int i = 0; i < head.length() && open.get(); i++) {
                    if (!slow.send(head.substring(i, i + 1))) {
                        return;
                    }
                    try {
                        Thread.sleep(100); // the attack's pace, not a wait for the server
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            trickle.start();
            try {
                RawHttp.Reply reply = slow.readReply();
                assertEquals(408, reply.status());
                assertTrue(reply.body().contains("\"error\":\"header_timeout\""), reply.body());
                assertEquals("close", reply.header("Connection"));
                assertTrue(slow.closedByServer(), "the slowloris connection is closed");
            } finally {
                open.set(false);
                trickle.interrupt();
                trickle.join();
            }
            assertEquals(1, metrics(server).headerTimeouts.sum());
        }
    }

    @Test
    void silentNewConnectionIsClosedByTheHeaderTimeout() throws Exception {
        try (TestServer server = TestServer.start("--header-timeout", "300ms");
                RawHttp silent = new RawHttp(server.port())) {
            assertTrue(silent.closedByServer(), "closed without a reply");
            waitFor(() -> metrics(server).headerTimeouts.sum(), 1);
        }
    }

    @Test
    void idleKeepAliveConnectionIsClosed() throws Exception {
        try (TestServer server = TestServer.start("--idle-timeout", "300ms");
                RawHttp conn = new RawHttp(server.port())) {
            conn.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
            assertEquals(200, conn.readReply().status());
            conn.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
            assertEquals(200, conn.readReply().status(), "kept alive between requests");
            assertTrue(conn.closedByServer(), "closed once idle");
            assertEquals(1, metrics(server).idleTimeouts.sum());
            assertEquals(0, metrics(server).headerTimeouts.sum(), "closed silently, not as a 408");
        }
    }

    @Test
    void openStreamIsNotIdle() throws Exception {
        try (TestServer server = TestServer.start("--idle-timeout", "200ms", "--header-timeout", "200ms")) {
            String admin = Tokens.admin();
            try (var publisher = io.iqstream.server.testing.ChunkedPublisher.open(server.port(), "not-idle",
                    "application/x-ndjson", admin)) {
                publisher.send("{\"type\":\"RUN_STARTED\"}\n");
                try (SseClient sub = SseClient.open(server.port(), "/v1/runs/not-idle/events",
                        "Authorization: Bearer " + admin)) {
                    sub.take(1, 5000);
                    // a probe kept alive with nothing in flight is closed by the idle timer: the time has passed
                    try (RawHttp probe = new RawHttp(server.port())) {
                        probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
                        assertEquals(200, probe.readReply().status());
                        assertTrue(probe.closedByServer());
                    }
                    waitFor(() -> metrics(server).idleTimeouts.sum(), 1);
                    publisher.send("{\"type\":\"RUN_FINISHED\"}\n");
                    assertEquals(200, publisher.finish().status(), "the publishing request was not cut");
                    assertEquals(1, sub.take(1, 5000).size(), "the stream was not cut");
                }
            }
        }
    }

    @Test
    void connectionsOverTheCapAreClosedWhileTheAdminPortAnswers() throws Exception {
        try (TestServer server = TestServer.start("--max-connections", "5", "--admin-port", "0")) {
            String admin = "http://127.0.0.1:" + server.server().adminPort();
            List<RawHttp> held = new ArrayList<>();
            try {
                for (int i = 0; i < 5; i++) {
                    held.add(new RawHttp(server.port()));
                }
                waitFor(() -> metrics(server).connectionsOpen.sum(), 5);
                for (int i = 0; i < 3; i++) {
                    try (RawHttp over = new RawHttp(server.port())) {
                        over.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
                        assertTrue(over.closedByServer(), "a connection over the cap is closed at once");
                    }
                }
                assertEquals(200, Http.get(admin + "/healthz").statusCode());
                assertEquals(200, Http.get(admin + "/readyz").statusCode());
                String text = Http.get(admin + "/metrics").body();
                assertTrue(text.contains("iqstream_connections_refused_total{reason=\"max_connections\"} 3\n"), text);
                assertTrue(text.contains("iqstream_connections_open 5\n"), text);
                assertEquals(404, Http.get(admin + "/v1/runs/x").statusCode(), "the admin port serves ops only");
                held.get(0).close();
                waitFor(() -> metrics(server).connectionsOpen.sum(), 4);
                assertEquals(200, Http.get(server.base() + "/healthz").statusCode(), "a freed slot is reused");
            } finally {
                for (RawHttp h : held) {
                    h.close();
                }
            }
        }
    }

    @Test
    void defaultCapLeavesAReserveBelowTheFileLimit() {
        long limit = ConnectionSlots.fileLimit();
        int max = ConnectionSlots.defaultMax(3, AdminInitializer.MAX_CONNECTIONS);
        if (limit > 0) {
            assertTrue(max <= Math.max(16, limit - ConnectionSlots.FILE_RESERVE - AdminInitializer.MAX_CONNECTIONS),
                    "cap " + max + " under file limit " + limit);
        }
        assertTrue(max >= 16);
    }

    private static Metrics metrics(TestServer server) {
        return server.server().context().metrics();
    }

    private static void waitFor(LongSupplier value, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (value.getAsLong() != expected && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(expected, value.getAsLong());
    }
}
