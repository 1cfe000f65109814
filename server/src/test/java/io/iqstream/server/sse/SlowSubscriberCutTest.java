package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code --max-subscriber-lag}: a subscriber that stops reading, so that its socket stays full, is cut once the lag
 * passes — counted in {@code iqstream_slow_subscribers_cut_total} and {@code refusals_total{reason="slow_subscriber"}},
 * its connection closed without the terminal chunk — while a reader beside it gets the whole run and its end, and
 * the publisher is answered.
 */
class SlowSubscriberCutTest {
    private static final int BIG_EVENTS = 150;

    @Test
    void aReaderThatStopsReadingIsCutAfterTheLag() throws Exception {
        // no packing: the stuck reader falls behind into plain segments, so only its socket (not memory) holds it
        try (TestServer server = TestServer.start("--max-subscriber-lag", "500ms", "--compress-log", "false",
                "--memory-budget", "64m");
                Socket stuck = new Socket()) {
            String admin = Tokens.admin();
            String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "z".repeat(60_000) + "\"}";
            stuck.setReceiveBufferSize(4096);
            stuck.connect(new InetSocketAddress("127.0.0.1", server.port()));
            try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "lagging", "application/x-ndjson",
                    admin)) {
                pub.send("{\"type\":\"RUN_STARTED\"}\n");
                stuck.getOutputStream().write(("GET /v1/runs/lagging/events HTTP/1.1\r\nHost: x\r\n"
                        + "Authorization: Bearer " + admin + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                try (SseClient fast = SseClient.open(server.port(), "/v1/runs/lagging/events",
                        "Authorization: Bearer " + admin)) {
                    assertEquals(200, fast.status());
                    // the stuck reader never reads another byte: the server fills its socket
                    for (int i = 0; i < BIG_EVENTS; i++) {
                        pub.send(big + "\n");
                    }
                    awaitMetric(server, "iqstream_slow_subscribers_cut_total", 1);
                    pub.send("{\"type\":\"RUN_FINISHED\"}\n");
                    ChunkedPublisher.Reply reply = pub.finish();
                    assertEquals(200, reply.status(), reply.body());
                    List<SseClient.Event> all = fast.take(BIG_EVENTS + 2, 20_000);
                    SseClient.assertConsecutive(all, 1);
                    assertTrue(fast.awaitEnd(10_000));
                }
            }
            String metrics = Http.get(server.base() + "/metrics").body();
            assertEquals(1, value(metrics, "iqstream_slow_subscribers_cut_total"), metrics);
            assertEquals(1, value(metrics, "iqstream_refusals_total{reason=\"slow_subscriber\"}"), metrics);
            // the stuck reader, reading at last, finds what was in flight, then the server's close: no terminal chunk
            byte[] got = readToClose(stuck);
            String text = new String(got, StandardCharsets.ISO_8859_1);
            assertTrue(text.startsWith("HTTP/1.1 200"), text.substring(0, Math.min(200, text.length())));
            assertFalse(text.contains("RUN_FINISHED"), "the cut reader did not get the run's end");
            assertFalse(text.endsWith("0\r\n\r\n"), "the cut reader's stream has no terminal chunk");
        }
    }

    /** Reads until the server closes (EOF or reset); fails if the connection is still open after 10 s of silence. */
    private static byte[] readToClose(Socket s) throws IOException {
        s.setSoTimeout(10_000);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[64 * 1024];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                out.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the slow subscriber's connection was not closed (" + out.size() + " bytes read)");
        } catch (IOException reset) {
            // a reset is a close too
        }
        return out.toByteArray();
    }

    private static void awaitMetric(TestServer server, String name, long atLeast) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        String metrics = "";
        while (System.nanoTime() < deadline) {
            metrics = Http.get(server.base() + "/metrics").body();
            if (value(metrics, name) >= atLeast) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(name + " did not reach " + atLeast + " within 20 s:\n" + metrics);
    }

    private static long value(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\d+)").matcher(metrics);
        assertTrue(m.find(), name + " not in /metrics:\n" + metrics);
        return Long.parseLong(m.group(1));
    }
}
