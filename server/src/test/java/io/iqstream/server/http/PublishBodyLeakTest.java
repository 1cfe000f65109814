package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Publish bodies that keep streaming while the server refuses them, breaks them off, or drains — the sequence the
 * client suites drive (publish, drain, retry elsewhere). Every body chunk must be released: Netty's leak detector
 * runs at paranoid in tests and {@code LeakCheckExtension} fails this class on any report.
 */
class PublishBodyLeakTest {
    private static final String EVENT = "{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":\"" + "x".repeat(200) + "\"}\n";

    private static String chunk(String text) {
        return Integer.toHexString(text.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + text + "\r\n";
    }

    /**
     * Head and a few chunks in one write, so that chunks arrive while the connection moves to its worker (the leak
     * this class was written for: a connection reset while between loops never saw channelInactive, and the
     * chunks held for it during the move were never released).
     */
    private static Socket open(int port, String runId, String extraHeaders, int chunks) throws IOException {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(10_000);
        StringBuilder sb = new StringBuilder("POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: x\r\n"
                + "Authorization: Bearer " + Tokens.admin() + "\r\nContent-Type: application/x-ndjson\r\n"
                + "Transfer-Encoding: chunked\r\n" + extraHeaders + "\r\n");
        for (int i = 0; i < chunks; i++) {
            sb.append(chunk(EVENT));
        }
        s.getOutputStream().write(sb.toString().getBytes(StandardCharsets.UTF_8));
        return s;
    }

    /** Keeps sending chunks until the server stops taking them (it answered and closed) or {@code max} went. */
    private static void keepSending(Socket s, int max) {
        try {
            OutputStream out = s.getOutputStream();
            for (int i = 0; i < max; i++) {
                out.write(chunk(EVENT).getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // the server closed: expected after a refusal
        }
    }

    private static String statusLine(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            sb.append((char) c);
        }
        return sb.toString();
    }

    private static void reset(Socket s) throws IOException {
        s.setSoLinger(true, 0);
        s.close();
    }

    private static void awaitPublishing(TestServer server, String runId) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!Http.get(server.base() + "/v1/runs/" + runId, "Authorization", "Bearer " + Tokens.admin()).body()
                .contains("\"publishing\":true")) {
            assertTrue(System.nanoTime() < deadline, runId + " publishing within 10 s");
            Thread.sleep(10); // polling a condition, bounded by the deadline
        }
    }

    @Test
    void bodiesStreamingPastARefusalABreakOrADrainAreReleased() throws Exception {
        try (TestServer server = TestServer.start("--workers", "4")) {
            for (int i = 0; i < 40; i++) {
                // a refusal before any event (run_lost), the body still streaming, then a reset
                try (Socket s = open(server.port(), "lost-" + i, "Last-Event-ID: 7\r\n", 4)) {
                    keepSending(s, 20);
                    assertTrue(statusLine(s).contains(" 409 "), "run_lost");
                    reset(s);
                }
                // a publish broken off mid-body (the proxy cut), then retried with its count
                try (Socket s = open(server.port(), "cut-" + i, "", 4)) {
                    keepSending(s, 5);
                    reset(s);
                }
                // a second publisher on an open run: 409 publisher_active while its body streams
                try (Socket first = open(server.port(), "busy-" + i, "", 2)) {
                    awaitPublishing(server, "busy-" + i);
                    Socket second = open(server.port(), "busy-" + i, "", 4);
                    keepSending(second, 20);
                    assertTrue(statusLine(second).contains(" 409 "), "publisher_active");
                    reset(second);
                    reset(first);
                }
            }
            Thread drain = new Thread(() -> {
                try {
                    server.server().drain(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            drain.start();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (Http.get(server.base() + "/readyz").statusCode() != 503) {
                assertTrue(System.nanoTime() < deadline, "draining within 10 s");
                Thread.sleep(20); // polling a condition, bounded by the deadline
            }
            for (int i = 0; i < 40; i++) {
                // draining: a new run is refused 503 while its body streams
                try (Socket s = open(server.port(), "drained-" + i, "", 4)) {
                    keepSending(s, 20);
                    assertTrue(statusLine(s).contains(" 503 "), "draining");
                    reset(s);
                }
            }
            drain.join(10_000);
            assertEquals(200, Http.get(server.base() + "/healthz").statusCode());
            // every broken publish seen by the server before it closes (a publish still appending while the server
            // shuts down is another matter: the shutdown's)
            long deadline2 = System.nanoTime() + 10_000_000_000L;
            while (server.server().context().metrics().publishersActive.sum() != 0) {
                assertTrue(System.nanoTime() < deadline2, "publishers gone within 10 s");
                Thread.sleep(20); // polling a condition, bounded by the deadline
            }
        }
    }
}
