package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A stream is charged what it holds in the buffer pool: a segment is cut from one of the pool's size classes
 * (16,385 B asked is a 20,480 B buffer, 525,000 B a 655,360 B one), so it is asked at that size and charged it.
 * Read from the pool itself over the real server: the pool's pages in use ({@code
 * iqstream_direct_memory_active_bytes}) that a stream's messages add, against what the budget was charged for them
 * ({@code iqstream_memory_used_bytes}). Charged at the size asked, the pages were 1.27 x the charge for 16,385 B
 * messages and 1.26 x for 525,000 B ones.
 *
 * <p>The pool's pages in use include the buffers its threads' caches keep after reading requests (up to a few hundred
 * KiB, 464 KiB once on a busy machine): each size is measured on a server of its own, over enough messages (10 and
 * 15 MiB charged) that what those caches add stays a few percent of the charge.
 */
class StreamPoolPagesTest {
    private static final Pattern METRIC = Pattern.compile("(?m)^(iqstream_[a-z_]+) (-?\\d+)$");
    /** Pages in use over the charge: the index and the segments' objects are heap, so the pages are a bit under. */
    private static final double LEAST = 0.90;
    private static final double MOST = 1.10;

    private static long metric(TestServer server, String name) throws Exception {
        Matcher m = METRIC.matcher(Http.get(server.base() + "/metrics").body());
        while (m.find()) {
            if (m.group(1).equals(name)) {
                return Long.parseLong(m.group(2));
            }
        }
        throw new AssertionError("no " + name);
    }

    /** Creates the stream at {@code url} and appends {@code count} messages of {@code size} bytes to it. */
    private static void fill(String url, int size, int count) throws Exception {
        assertEquals(201, send("PUT", url, null, "Content-Type", "text/plain").statusCode());
        String message = "m".repeat(size);
        for (int i = 0; i < count; i++) {
            assertEquals(204, send("POST", url, message, "Content-Type", "text/plain").statusCode());
        }
    }

    @Test
    void theBudgetIsChargedThePoolsPagesForMessagesJustAboveASizeClass() throws Exception {
        StringBuilder report = new StringBuilder();
        boolean within = true;
        for (int[] sizeAndCount : new int[][] {{16_385, 512}, {525_000, 24}}) {
            int size = sizeAndCount[0];
            int count = sizeAndCount[1];
            // a server each: the segments one size freed would wait in its threads' caches, counted as in use, and
            // go (trimmed) while the next is measured
            try (TestServer server = TestServer.start("--durable-streams-open", "true", "--max-event-bytes", "1m",
                    "--max-run-bytes", "64m", "--memory-budget", "256m")) {
                String url = server.base() + "/v1/stream/pages/s" + size;
                long pages0 = metric(server, "iqstream_direct_memory_active_bytes");
                long used0 = metric(server, "iqstream_memory_used_bytes");
                fill(url, size, count);
                long pages = metric(server, "iqstream_direct_memory_active_bytes") - pages0;
                long charged = metric(server, "iqstream_memory_used_bytes") - used0;
                double ratio = (double) pages / charged;
                report.append(String.format("%d messages of %,d B: pool pages %,d B, charged %,d B, %.3f x; ",
                        count, size, pages, charged, ratio));
                within &= ratio >= LEAST && ratio <= MOST;
            }
        }
        System.out.println("stream pool pages: " + report);
        assertTrue(within, "pool pages over the charge within " + LEAST + "-" + MOST + ": " + report);
    }
}
