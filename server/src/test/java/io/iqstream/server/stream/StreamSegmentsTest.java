package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.run.ByteLog;
import io.iqstream.server.run.RunLog;
import io.iqstream.server.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A stream's bytes live contiguously in pooled segments (its {@link ByteLog}), seen over real sockets: messages of
 * every size (within a segment, filling one, larger than one) read back byte-exact from any message boundary, a
 * fork reads its source's bytes up to the fork point and then its own, and the memory budget's charge follows what
 * is held — the bytes, their segments' room and overhead, a boundary per message — not a buffer object per message.
 * The log's own unit tests are {@code run.ByteLogTest}.
 */
class StreamSegmentsTest {
    private static final String TYPE = "Content-Type";
    private static final Pattern USED = Pattern.compile("(?m)^iqstream_memory_used_bytes (\\d+)$");

    @Test
    void messagesAcrossSegmentsReadBackByteExactAndAForkSharesThem() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            String url = server.base() + "/v1/stream/segments/source";
            assertEquals(201, send("PUT", url, null, TYPE, "text/plain").statusCode());
            Random random = new Random(32);
            List<String> messages = new ArrayList<>();
            List<String> offsets = new ArrayList<>();
            for (int i = 0; i < 160; i++) {
                int size = i % 20 == 7 ? 16 * 1024 + random.nextInt(30_000) : 1 + random.nextInt(900);
                StringBuilder m = new StringBuilder(size);
                for (int j = 0; j < size; j++) {
                    m.append((char) ('!' + random.nextInt(94)));
                }
                messages.add(m.toString());
                HttpResponse<String> r = send("POST", url, m.toString(), TYPE, "text/plain");
                assertEquals(204, r.statusCode(), r.body());
                offsets.add(r.headers().firstValue("Stream-Next-Offset").orElseThrow());
            }
            assertEquals(String.join("", messages), readAll(url, "-1"), "every byte, in order");
            for (int k : new int[] {0, 6, 7, 8, 99, 158}) {
                assertEquals(String.join("", messages.subList(k + 1, messages.size())), readAll(url, offsets.get(k)),
                        "read from the boundary after message " + k);
            }
            String fork = server.base() + "/v1/stream/segments/fork";
            assertEquals(201, send("PUT", fork, null, TYPE, "text/plain", "Stream-Forked-From",
                    "/v1/stream/segments/source", "Stream-Fork-Offset", offsets.get(87)).statusCode());
            assertEquals(204, send("POST", url, "after the fork, the source's", TYPE, "text/plain").statusCode());
            assertEquals(204, send("POST", fork, "the fork's own", TYPE, "text/plain").statusCode());
            assertEquals(String.join("", messages.subList(0, 88)) + "the fork's own", readAll(fork, "-1"));
            assertEquals(String.join("", messages.subList(50, 88)) + "the fork's own",
                    readAll(fork, offsets.get(49)), "a fork read from a boundary of its source's part");
            assertEquals(String.join("", messages) + "after the fork, the source's", readAll(url, "-1"));
        }
    }

    @Test
    void theChargeFollowsWhatIsHeld() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            long before = used(server);
            String path = "/v1/stream/segments/charged";
            assertEquals(201, send("PUT", server.base() + path, null, TYPE, "text/plain").statusCode());
            int count = 1000;
            int size = 20;
            URI base = URI.create(server.base());
            try (Socket socket = new Socket(base.getHost(), base.getPort())) {
                StringBuilder all = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    String body = String.format("%0" + size + "d", i);
                    all.append("POST ").append(path).append(" HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n")
                            .append("Content-Length: ").append(size).append("\r\n\r\n").append(body);
                }
                OutputStream out = socket.getOutputStream();
                out.write(all.toString().getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertEquals(count, answers(socket.getInputStream(), count), "every pipelined append answered 204");
            }
            long charged = used(server) - before;
            long bytes = (long) count * size;
            // held: the bytes, at most two segments' room (the last one's, and one's rounding), a boundary each,
            // and each segment's overhead (no more segments than the bytes fill of the smallest, plus two)
            long most = DurableStreams.STREAM_OVERHEAD_BYTES + bytes + 2L * ByteLog.MAX_SEGMENT_BYTES
                    + count * ByteLog.INDEX_BYTES_PER_MESSAGE
                    + (bytes / ByteLog.MIN_SEGMENT_BYTES + 2) * RunLog.SEGMENT_OVERHEAD_BYTES;
            assertTrue(charged >= bytes && charged <= most,
                    "charged " + charged + " B for " + count + " messages of " + size + " B (at most " + most + ")");
            assertEquals(204, send("DELETE", server.base() + path, null).statusCode());
            assertEquals(before, used(server), "the delete gives back all of it");
        }
    }

    @Test
    void aForkRefusedAfterItsSourceWasHeldHoldsNothingOfIt() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true", "--max-event-bytes", "16k",
                "--max-run-bytes", "64k")) {
            long before = used(server);
            String source = server.base() + "/v1/stream/segments/held";
            assertEquals(201, send("PUT", source, null, TYPE, "text/plain").statusCode());
            HttpResponse<String> first = send("POST", source, "0123456789", TYPE, "text/plain");
            assertEquals(204, first.statusCode());
            assertEquals(204, send("POST", source, "abcdefghij", TYPE, "text/plain").statusCode());
            String at = first.headers().firstValue("Stream-Next-Offset").orElseThrow();
            String fork = server.base() + "/v1/stream/segments/held-fork";
            // refused once the source is held (it is held before its log is read): each gives the hold back
            HttpResponse<String> past = send("PUT", fork, null, TYPE, "text/plain", "Stream-Forked-From",
                    "/v1/stream/segments/held", "Stream-Fork-Offset", at, "Stream-Fork-Sub-Offset", "11");
            assertEquals(400, past.statusCode(), "a sub-offset past the message: " + past.body());
            HttpResponse<String> large = send("PUT", fork, "x".repeat(70 * 1024), TYPE, "text/plain",
                    "Stream-Forked-From", "/v1/stream/segments/held");
            assertEquals(413, large.statusCode(), "a first message over --max-run-bytes: " + large.body());
            // so the source's delete frees it now: with a hold left behind it would stay, deleted but charged
            assertEquals(204, send("DELETE", source, null).statusCode());
            assertEquals(before, used(server), "the source's delete gives back all of it");
            assertEquals(404, send("GET", source + "?offset=-1", null).statusCode());
        }
    }

    /** Reads {@code count} answers of 204 from a pipelined connection; returns how many were 204. */
    private static int answers(InputStream in, int count) throws Exception {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        int found = 0;
        while (found < count) {
            int n = in.read(buf);
            if (n < 0) {
                break;
            }
            seen.write(buf, 0, n);
            String text = seen.toString(StandardCharsets.US_ASCII);
            found = 0;
            for (int i = text.indexOf("HTTP/1.1 204"); i >= 0; i = text.indexOf("HTTP/1.1 204", i + 1)) {
                found++;
            }
        }
        return found;
    }

    /** A catch-up read of every page from {@code offset} to the tail. */
    private static String readAll(String url, String offset) throws Exception {
        StringBuilder out = new StringBuilder();
        String at = offset;
        for (int page = 0; page < 100; page++) {
            HttpResponse<String> r = send("GET", url + "?offset=" + at, null);
            assertEquals(200, r.statusCode(), r.body());
            out.append(r.body());
            at = r.headers().firstValue("Stream-Next-Offset").orElseThrow();
            if (r.headers().firstValue("Stream-Up-To-Date").isPresent()) {
                return out.toString();
            }
        }
        throw new AssertionError("no end after 100 pages");
    }

    private static long used(TestServer server) throws Exception {
        Matcher m = USED.matcher(send("GET", server.base() + "/metrics", null).body());
        assertTrue(m.find(), "iqstream_memory_used_bytes in /metrics");
        return Long.parseLong(m.group(1));
    }
}
