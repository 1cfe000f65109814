package io.iqstream.server.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@code --retry-jitter}: every stream's {@code retry:} is --retry plus its own part of the jitter. */
class RetryJitterTest {

    @Test
    void streamsGetRetryIntervalsSpreadOverTheJitter() throws Exception {
        try (TestServer server = TestServer.start("--retry", "1000ms", "--retry-jitter", "2s")) {
            String admin = Tokens.admin();
            assertEquals(200, Http.publish(server.base(), "jitter", admin,
                    "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}",
                    "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}").statusCode());
            TreeSet<Long> seen = new TreeSet<>();
            for (int i = 0; i < 40; i++) {
                seen.add(retryOf(server, admin, "jitter"));
            }
            // 40 streams over 64 intervals: all in one is a chance of 64^-39
            assertTrue(seen.size() > 1, "one interval for every stream: " + seen);
            assertTrue(seen.first() >= 1000 && seen.last() <= 3000, "outside [retry, retry + jitter]: " + seen);
        }
    }

    @Test
    void noJitterGivesEveryStreamTheSameInterval() throws Exception {
        try (TestServer server = TestServer.start("--retry", "700ms", "--retry-jitter", "0")) {
            String admin = Tokens.admin();
            assertEquals(200, Http.publish(server.base(), "still", admin,
                    "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}",
                    "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}").statusCode());
            for (int i = 0; i < 10; i++) {
                assertEquals(700, retryOf(server, admin, "still"));
            }
        }
    }

    @Test
    void linesCoverTheRangeEvenlyAndStayWholeAfterAWrite() {
        RetryLines lines = new RetryLines(1000, 1000);
        assertEquals(RetryLines.VARIANTS, lines.variants());
        assertEquals(1000, lines.minRetryMs());
        assertEquals(2000, lines.maxRetryMs());
        RetryLines small = new RetryLines(500, 3);
        assertEquals(4, small.variants(), "one line per millisecond of a jitter shorter than the variants");
        for (int i = 0; i < 200; i++) {
            ByteBuf line = lines.next();
            String text = line.toString(StandardCharsets.US_ASCII);
            assertTrue(text.matches("retry: (1\\d{3}|2000)\n\n"), text);
            line.release(); // what a stream's write does: the shared line must stay whole
        }
        assertEquals(1, new RetryLines(1000, 0).variants());
    }

    private static long retryOf(TestServer server, String token, String runId) throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write(("GET /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + token + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            int at = all.indexOf("retry: ");
            assertTrue(at > 0, all);
            return Long.parseLong(all.substring(at + 7, all.indexOf('\n', at)).trim());
        }
    }
}
