package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Request bodies of Durable Streams requests that a client can make the server hold: a body on a read or a delete
 * (refused at its head, never gathered), and half-sent bodies (charged to the memory budget as they grow, 503 when
 * it refuses, and cut after {@code --body-timeout}). No out-of-memory error, the charge given back, and another
 * user's append served once the half-sent bodies are gone. Each test has its own server, sized as the launcher
 * sizes one for its budget ({@link HostileServer}).
 */
class HostileDurableBodiesTest {
    private static final String MEMORY_USED = "iqstream_memory_used_bytes";

    @Test
    void aBodyOnAReadOrADeleteIsRefusedAtItsHead() throws Exception {
        try (HostileServer server = HostileServer.start("--durable-streams-open", "true")) {
            HostileDurableReadersTest.binaryStream(server.port(), "/v1/stream/g/x", 1);
            long before = settledMemoryUsed(server);
            for (String method : List.of("GET", "HEAD", "DELETE")) {
                try (Socket s = RawHttp.connect(server.port())) {
                    // the head announces 1 MiB; none of it is sent: the answer must not wait for it
                    RawHttp.write(s, method + " /v1/stream/g/x HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n"
                            + "x".repeat(1000));
                    RawHttp.Response r = RawHttp.read(s, 10_000);
                    assertEquals(400, r.status(), method + ": " + r);
                    assertEquals("close", r.header("Connection"), method + ": " + r);
                    if (!method.equals("HEAD")) {
                        assertEquals("body_not_allowed", r.error(), method + ": " + r);
                    }
                    assertTrue(RawHttp.awaitClosed(s, 10_000), method + ": the connection is closed");
                }
                // a chunked body likewise
                try (Socket s = RawHttp.connect(server.port())) {
                    RawHttp.write(s, method + " /v1/stream/g/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + "3e8\r\n" + "x".repeat(1000) + "\r\n");
                    RawHttp.Response r = RawHttp.read(s, 10_000);
                    assertEquals(400, r.status(), method + " chunked: " + r);
                }
            }
            // an empty body is fine
            RawHttp.Response r = RawHttp.exchange(server.port(), "GET /v1/stream/g/x?offset=-1 HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Length: 0\r\nConnection: close\r\n\r\n", 10_000);
            assertEquals(200, r.status(), r.toString());
            assertEquals(before, server.metric(MEMORY_USED), "nothing left charged");
            server.assertSound();
        }
    }

    @Test
    void aBodyThatNeverEndsIsCutAfterTheBodyTimeout() throws Exception {
        try (HostileServer server = HostileServer.start("--durable-streams-open", "true", "--body-timeout", "1s")) {
            HostileDurableReadersTest.binaryStream(server.port(), "/v1/stream/slow", 1);
            long before = settledMemoryUsed(server);
            try (Socket s = RawHttp.connect(server.port())) {
                RawHttp.write(s, "POST /v1/stream/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: 100000\r\n\r\n" + "y".repeat(99_999));
                RawHttp.Response r = RawHttp.read(s, 20_000);
                assertEquals(408, r.status(), r.toString());
                assertEquals("body_timeout", r.error(), r.toString());
                assertTrue(RawHttp.awaitClosed(s, 10_000), "the connection is closed");
            }
            Conditions.await("the body's charge is given back", 10_000, () -> server.metricNow(MEMORY_USED) == before);
            server.assertSound();
        }
    }

    @Test
    void halfSentBodiesOnManyConnectionsAreChargedAndRefusedBeforeMemoryRunsOut() throws Exception {
        // 8m budget: about 27 MiB of direct memory. 60 connections each hold a 1 MiB body but its last byte
        try (HostileServer server = HostileServer.start("--durable-streams-open", "true", "--memory-budget", "8m",
                "--body-timeout", "5s")) {
            HostileDurableReadersTest.binaryStream(server.port(), "/v1/stream/fill/a", 1);
            byte[] head = ("POST /v1/stream/fill/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                    + "Content-Length: 1048576\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
            byte[] most = new byte[1048575];
            List<Socket> held = new ArrayList<>();
            int refused = 0;
            try {
                for (int i = 0; i < 60; i++) {
                    Socket s = RawHttp.connect(server.port());
                    held.add(s);
                    RawHttp.write(s, head);
                    try {
                        RawHttp.write(s, most);
                    } catch (IOException e) {
                        // refused and closed while sending: read the answer below
                    }
                }
                // the bytes written may still be in the kernel's buffers: the answers are polled for, bounded by a
                // deadline, until the server has read enough to refuse some
                List<Socket> unanswered = new ArrayList<>(held);
                long answersBy = System.nanoTime() + 20_000_000_000L;
                while (refused == 0 && !unanswered.isEmpty() && System.nanoTime() < answersBy) {
                    for (java.util.Iterator<Socket> it = unanswered.iterator(); it.hasNext(); ) {
                        Socket s = it.next();
                        if (s.getInputStream().available() == 0) {
                            continue;
                        }
                        it.remove();
                        RawHttp.Response r = RawHttp.read(s, 1_000);
                        if (r.status() == 408) {
                            // a slow machine: this body was held for --body-timeout before the loop got here
                            assertEquals("body_timeout", r.error(), r.toString());
                            continue;
                        }
                        assertEquals(503, r.status(), r.toString());
                        assertEquals("over_budget", r.error(), r.toString());
                        assertEquals("1", r.header("Retry-After"), r.toString());
                        refused++;
                    }
                    Thread.sleep(50); // polling the sockets, bounded by the deadline above
                }
                long used = server.metric(MEMORY_USED);
                assertTrue(refused > 0, "some half-sent bodies were refused; memory used " + used + " "
                        + server.describe());
                assertTrue(used > 0 && used <= 8L << 20, "the bodies held are charged: " + used);
                // another user: a stream's reader is served now, and a 300 KB append once the bodies are cut
                RawHttp.Response read = RawHttp.get(server.port(), "/v1/stream/fill/a?offset=-1");
                assertEquals(200, read.status(), read + " " + server.describe());
                HostileDurableReadersTest.binaryStream(server.port(), "/v1/stream/fill/honest", 0);
                byte[] honest = new byte[300_000];
                long deadline = System.nanoTime() + 30_000_000_000L;
                RawHttp.Response r;
                do {
                    r = RawHttp.exchange(server.port(), HostileDurableReadersTest.append("/v1/stream/fill/honest",
                            honest), 10_000);
                    if (r.status() == 503) {
                        assertEquals("1", r.header("Retry-After"), r.toString());
                        Thread.sleep(1_000); // as Retry-After says, until the half-sent bodies time out
                    }
                } while (r.status() == 503 && System.nanoTime() < deadline);
                assertEquals(204, r.status(), "the honest append: " + r + " " + server.describe());
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
            server.assertSound();
        }
    }

    /**
     * Memory used once the requests before have let go of it: a request body's charge is given back just after its
     * answer is written, so a read of /metrics right after the answer may still count it. Two reads 100 ms apart
     * that agree, within a deadline.
     */
    private static long settledMemoryUsed(HostileServer server) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        long last = server.metric(MEMORY_USED);
        while (true) {
            Thread.sleep(100); // polling for a stable figure, bounded by the deadline
            long now = server.metric(MEMORY_USED);
            if (now == last || System.nanoTime() > deadline) {
                return now;
            }
            last = now;
        }
    }
}
