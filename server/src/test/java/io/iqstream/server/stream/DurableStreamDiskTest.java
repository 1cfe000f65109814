package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.readAll;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.LaunchedServer;
import io.iqstream.server.testing.MetricValues;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durable streams on a real disk ({@code --durability disk}), the server in its own process killed with SIGKILL:
 * every acknowledged append is there after the restart, once and in order, and nothing unacknowledged sits in the
 * middle; producers go on at their next seq and their retry of the last is a duplicate; forks, closures, soft
 * deletes and Stream-Seq survive; a torn tail is cut and the stream served up to its last whole record.
 */
class DurableStreamDiskTest {
    private static final String TEXT = "text/plain";
    private static final Pattern MESSAGE = Pattern.compile("w(\\d+)-(\\d+);");


    private static LaunchedServer start(Path dir, String... more) throws IOException {
        List<String> flags = new ArrayList<>(List.of("--durability", "disk", "--data-dir", dir.toString(),
                "--durable-streams-open", "true"));
        flags.addAll(List.of(more));
        return LaunchedServer.start(flags.toArray(new String[0]));
    }

    private static HttpResponse<String> produce(String url, String producer, long epoch, long seq, String body)
            throws Exception {
        return send("POST", url, body, "Content-Type", TEXT, "Producer-Id", producer, "Producer-Epoch",
                Long.toString(epoch), "Producer-Seq", Long.toString(seq));
    }

    /**
     * Four producers append to four streams as fast as they are answered; the server is SIGKILLed under that load
     * three times. After each restart every stream holds exactly seqs 0..n of its producer, in order, n at least
     * the last one acknowledged; the producer's next seq is 200 and its retry of n a duplicate.
     */
    @Test
    void everyAcknowledgedAppendSurvivesSigkillUnderLoad(@TempDir Path dir) throws Exception {
        int writers = 4;
        long[] next = new long[writers];
        for (int round = 0; round < 3; round++) {
            LaunchedServer server = start(dir);
            try {
                String base = server.base() + "/v1/stream/crash/";
                if (round == 0) {
                    for (int w = 0; w < writers; w++) {
                        assertEquals(201, send("PUT", base + w, null, "Content-Type", TEXT).statusCode());
                    }
                } else {
                    for (int w = 0; w < writers; w++) {
                        // stored: every acknowledged seq and perhaps the one in flight at the kill (never answered)
                        long stored = check(base + w, w, next[w] - 1);
                        // the producer's retry of the last stored seq is a duplicate; it goes on after it
                        assertEquals(204, produce(base + w, "p" + w, 0, stored, "w" + w + "-" + stored + ";")
                                .statusCode(), "round " + round + ": the retry of the last seq");
                        next[w] = stored + 1;
                    }
                }
                ConcurrentHashMap<Integer, Long> acked = new ConcurrentHashMap<>();
                ConcurrentHashMap<Integer, String> failures = new ConcurrentHashMap<>();
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> threads = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    int me = w;
                    long from = next[w];
                    threads.add(Thread.ofPlatform().start(() -> {
                        long seq = from;
                        while (!stop.get()) {
                            try {
                                HttpResponse<String> r = produce(base + me, "p" + me, 0, seq, "w" + me + "-" + seq + ";");
                                if (r.statusCode() != 200) {
                                    failures.put(me, "seq " + seq + ": " + r.statusCode() + " " + r.body() + " " + r.headers().map());
                                    return;
                                }
                                acked.put(me, seq);
                                seq++;
                            } catch (Exception e) {
                                failures.put(me, e.toString()); // the kill, or a failure reported below
                                return;
                            }
                        }
                    }));
                }
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (!allPast(acked, next, 20)) {
                    assertTrue(System.nanoTime() < deadline, "the writers were not answered: " + acked + " " + failures);
                    assertTrue(failures.isEmpty(), "a writer failed before the kill: " + failures + "\n" + server.output());
                    Thread.sleep(20); // polling the writers' progress, bounded by the deadline
                }
                server.sigkill();
                stop.set(true);
                for (Thread t : threads) {
                    t.join(10_000);
                }
                for (int w = 0; w < writers; w++) {
                    next[w] = acked.get(w) + 1;
                }
            } finally {
                if (server.isAlive()) {
                    server.close();
                }
            }
        }
        LaunchedServer server = start(dir);
        try {
            for (int w = 0; w < writers; w++) {
                long last = check(server.base() + "/v1/stream/crash/" + w, w, next[w] - 1);
                assertEquals(200, produce(server.base() + "/v1/stream/crash/" + w, "p" + w, 0, last + 1,
                        "w" + w + "-" + (last + 1) + ";").statusCode(), "the producer goes on at its next seq");
            }
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("\niqstream_durable_streams_recovered " + writers + "\n"), metrics);
        } finally {
            server.close();
        }
    }

    /** Whether every writer has had {@code n} appends acknowledged since its start at {@code next}. */
    private static boolean allPast(ConcurrentHashMap<Integer, Long> acked, long[] next, int n) {
        for (int w = 0; w < next.length; w++) {
            Long a = acked.get(w);
            if (a == null || a < next[w] + n) {
                return false;
            }
        }
        return true;
    }

    /** The stream holds seqs 0..n of writer w exactly once, in order, with n >= acked; returns n. */
    private static long check(String url, int w, long acked) throws Exception {
        String body = readAll(url);
        Matcher m = MESSAGE.matcher(body);
        long expected = 0;
        int end = 0;
        while (m.find()) {
            assertEquals(end, m.start(), "nothing but whole messages: " + url);
            assertEquals(w, Integer.parseInt(m.group(1)));
            assertEquals(expected, Long.parseLong(m.group(2)), "seqs in order, each once, no hole: " + url);
            expected++;
            end = m.end();
        }
        assertEquals(body.length(), end, "no partial message at the end of " + url);
        assertTrue(expected - 1 >= acked, url + ": acknowledged up to " + acked + ", stored up to " + (expected - 1));
        return expected - 1;
    }

    /** Forks, closure, soft deletes, Stream-Seq, TTL and expiry, JSON streams: all as they were after a SIGKILL. */
    @Test
    void streamsComeBackWholeAfterSigkill(@TempDir Path dir) throws Exception {
        LaunchedServer server = start(dir);
        String base = server.base() + "/v1/stream/whole/";
        assertEquals(201, send("PUT", base + "src", "one,", "Content-Type", TEXT).statusCode());
        assertEquals(204, send("POST", base + "src", "two,", "Content-Type", TEXT, "Stream-Seq", "0002").statusCode());
        assertEquals(201, send("PUT", base + "fork", null, "Stream-Forked-From", "/v1/stream/whole/src")
                .statusCode());
        assertEquals(204, send("POST", base + "fork", "mine", "Content-Type", TEXT).statusCode());
        assertEquals(204, send("DELETE", base + "src", null).statusCode(), "soft: the fork still reads it");
        assertEquals(201, send("PUT", base + "closed", "[1,2]", "Content-Type", "application/json").statusCode());
        assertEquals(204, send("POST", base + "closed", "[3]", "Content-Type", "application/json",
                "Stream-Closed", "true").statusCode());
        assertEquals(201, send("PUT", base + "ttl", "t", "Content-Type", TEXT, "Stream-TTL", "3600").statusCode());
        assertEquals(204, send("POST", base + "ttl", "u", "Content-Type", TEXT, "Stream-Seq", "0005").statusCode());
        assertEquals(201, send("PUT", base + "gone", "g", "Content-Type", TEXT).statusCode());
        assertEquals(204, send("DELETE", base + "gone", null).statusCode());
        server.sigkill();

        server = start(dir);
        try {
            base = server.base() + "/v1/stream/whole/";
            assertEquals("one,two,mine", send("GET", base + "fork?offset=-1", null).body());
            assertEquals(410, send("GET", base + "src?offset=-1", null).statusCode(), "still soft-deleted");
            assertEquals(409, send("PUT", base + "src", null, "Content-Type", TEXT).statusCode(),
                    "its path is still held by its fork");
            HttpResponse<String> closed = send("GET", base + "closed?offset=-1", null);
            assertEquals("[1,2,3]", closed.body());
            assertEquals("true", closed.headers().firstValue("Stream-Closed").orElse(""));
            assertEquals(409, send("POST", base + "closed", "[4]", "Content-Type", "application/json").statusCode());
            HttpResponse<String> head = send("HEAD", base + "ttl", null);
            assertEquals(200, head.statusCode());
            assertEquals("3600", head.headers().firstValue("Stream-TTL").orElse(""));
            assertEquals(404, send("GET", base + "gone?offset=-1", null).statusCode(), "a freed stream stays gone");
            // the Stream-Seq survived: a regression is refused, the next one taken
            assertEquals(409, send("POST", base + "ttl", "x", "Content-Type", TEXT, "Stream-Seq", "0003")
                    .statusCode());
            assertEquals(204, send("POST", base + "ttl", "v", "Content-Type", TEXT, "Stream-Seq", "0006")
                    .statusCode());
            assertEquals("tuv", send("GET", base + "ttl?offset=-1", null).body());
            // deleting the fork frees the source too, files and all
            assertEquals(204, send("DELETE", base + "fork", null).statusCode());
            assertEquals(201, send("PUT", base + "src", null, "Content-Type", TEXT).statusCode());
        } finally {
            server.close();
        }
        try (Stream<Path> files = Files.list(dir.resolve("streams"))) {
            assertEquals(3, files.count(), "the files of closed, ttl and the new src; the freed ones removed");
        }
    }

    /** Past --disk-budget a new stream and an append are 507, reads go on, and a DELETE gives the space back. */
    @Test
    void pastTheDiskBudgetWritesAre507AndADeleteGivesSpaceBack(@TempDir Path dir) throws Exception {
        LaunchedServer server = start(dir, "--disk-budget", "256k");
        try {
            String base = server.base() + "/v1/stream/budget/";
            assertEquals(201, send("PUT", base + "a", null, "Content-Type", TEXT).statusCode());
            String chunk = "d".repeat(16 * 1024);
            int stored = 0;
            HttpResponse<String> r;
            while ((r = send("POST", base + "a", chunk, "Content-Type", TEXT)).statusCode() == 204) {
                stored++;
                assertTrue(stored < 64, "a 256 KiB budget took 1 MiB");
            }
            assertEquals(507, r.statusCode(), r.body());
            assertTrue(r.body().contains("--disk-budget"), r.body());
            assertTrue(stored >= 14 && stored <= 17, stored + " appends of 16 KiB within 256 KiB (one may pass it)");
            assertEquals(507, send("PUT", base + "b", null, "Content-Type", TEXT).statusCode(), "no new stream");
            assertEquals(chunk.repeat(stored), readAll(base + "a"), "reads go on");
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("\niqstream_disk_budget_bytes 262144\n"), metrics);
            assertEquals(204, send("DELETE", base + "a", null).statusCode());
            assertTrue(send("GET", server.base() + "/metrics", null).body().contains("\niqstream_disk_used_bytes 0\n"),
                    "the file's space given back");
            assertEquals(201, send("PUT", base + "b", null, "Content-Type", TEXT).statusCode());
            assertEquals(204, send("POST", base + "b", chunk, "Content-Type", TEXT).statusCode());
        } finally {
            server.close();
        }
    }

    /**
     * A data directory several times larger than the heap (128 MiB of streams; a 16 MiB budget's server has a
     * 48 MiB heap) starts: recovery holds one file's records at a time, never the directory. Its streams start
     * cold and are read from their files; a fork, recovered after its source, reads the source's bytes and its own.
     */
    @Test
    void aDataDirectoryLargerThanTheHeapStarts(@TempDir Path dir) throws Exception {
        String message = "m".repeat(2 << 20);
        try (LaunchedServer s = start(dir, "--memory-budget", "512m", "--max-event-bytes", "3m")) {
            String base = s.base() + "/v1/stream/big/";
            for (int i = 0; i < 16; i++) {
                assertEquals(201, send("PUT", base + i, null, "Content-Type", TEXT).statusCode());
                for (int k = 0; k < 4; k++) {
                    assertEquals(204, send("POST", base + i, k + message, "Content-Type", TEXT).statusCode());
                }
            }
            assertEquals(201, send("PUT", base + "fork", null, "Stream-Forked-From", "/v1/stream/big/0",
                    "Stream-Fork-Offset", DurableStreamProtocol.offset(message.length() + 1)).statusCode());
            assertEquals(204, send("POST", base + "fork", "own", "Content-Type", TEXT).statusCode());
        }
        try (LaunchedServer s = start(dir, "--cold-after", "1s")) {
            String base = s.base() + "/v1/stream/big/";
            assertEquals(17, MetricValues.of(s.base(), "iqstream_durable_streams_recovered"));
            for (int i = 0; i < 16; i += 5) {
                HttpResponse<String> r = send("GET", base + i + "?offset="
                        + DurableStreamProtocol.offset(2L * (message.length() + 1)), null);
                assertEquals(200, r.statusCode(), "stream " + i);
                assertEquals("2" + message, r.body(), "stream " + i + "'s third message");
            }
            assertEquals("0" + message + "own", readAll(base + "fork"));
            s.assertNoLeaks();
        }
    }

    /** The last stream file cut at random offsets inside its last record: the stream is served up to it. */
    @Test
    void aTornTailIsCutAndTheWholeRecordsServed(@TempDir Path dir) throws Exception {
        Random random = new Random(11);
        int messages = 0;
        for (int round = 0; round < 3; round++) {
            LaunchedServer server = start(dir);
            String url = server.base() + "/v1/stream/torn/s";
            if (round == 0) {
                assertEquals(201, send("PUT", url, null, "Content-Type", TEXT).statusCode());
            } else {
                String body = send("GET", url + "?offset=-1", null).body();
                assertEquals(expected(messages), body, "round " + round);
                String metrics = send("GET", server.base() + "/metrics", null).body();
                assertTrue(!metrics.contains("\niqstream_durable_recovery_cut_bytes 0\n"), "a tail was cut");
            }
            for (int i = 0; i < 5; i++) {
                assertEquals(204, send("POST", url, "<" + messages + ">", "Content-Type", TEXT).statusCode());
                messages++;
            }
            server.sigkill();
            Path file;
            try (Stream<Path> files = Files.list(dir.resolve("streams"))) {
                file = files.findFirst().orElseThrow();
            }
            // a torn write: part of one more record, as a crash mid-write leaves it
            byte[] record = io.iqstream.server.storage.RecordFile.frame(new byte[40]);
            int keep = 1 + random.nextInt(record.length - 1);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                ch.write(java.nio.ByteBuffer.wrap(record, 0, keep));
            }
        }
    }

    /**
     * A crash can leave a file longer than what was written to it, the rest zeros (a file system that made the file
     * longer before its data reached the disk): eight zero bytes are no record (no record is empty), so the zeros
     * are cut as a torn tail and the stream served and appended to as before.
     */
    @Test
    void aZeroFilledTailIsCutAsATornOne(@TempDir Path dir) throws Exception {
        String path = "/v1/stream/zeros/s";
        try (LaunchedServer server = start(dir)) {
            assertEquals(201, send("PUT", server.base() + path, null, "Content-Type", TEXT).statusCode());
            for (int i = 0; i < 5; i++) {
                assertEquals(204, send("POST", server.base() + path, "<" + i + ">", "Content-Type", TEXT)
                        .statusCode());
            }
            server.sigkill();
        }
        Path file;
        try (Stream<Path> files = Files.list(dir.resolve("streams"))) {
            file = files.findFirst().orElseThrow();
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(java.nio.ByteBuffer.allocate(4096));
        }
        try (LaunchedServer server = start(dir)) {
            String url = server.base() + path;
            HttpResponse<String> r = send("GET", url + "?offset=-1", null);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(expected(5), r.body());
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("\niqstream_durable_recovery_cut_bytes 4096\n"), "the zeros were cut: "
                    + metrics.lines().filter(l -> l.contains("recovery")).toList());
            assertEquals(204, send("POST", url, "<5>", "Content-Type", TEXT).statusCode());
            assertEquals(expected(6), send("GET", url + "?offset=-1", null).body());
        }
    }

    /**
     * Damage that is no crash's torn tail (a byte flipped in a record with more records after it) is never cut and
     * never served as if the stream ended there: the file is left byte for byte as it was, that stream answers 500
     * {@code stream_damaged} to every request (a PUT does not create it again over its file; a fork of it is told so,
     * not 404), and the other streams start and serve.
     */
    @Test
    void aDamagedFileIsLeftAsItIsAndItsStreamAnswers500WhileTheOthersServe(@TempDir Path dir) throws Exception {
        // --fsync always: no journal, which would write the flipped record's bytes again at the restart
        try (LaunchedServer server = start(dir, "--fsync", "always")) {
            for (String name : List.of("hurt", "fine")) {
                String url = server.base() + "/v1/stream/damage/" + name;
                assertEquals(201, send("PUT", url, null, "Content-Type", TEXT).statusCode());
                for (int i = 0; i < 5; i++) {
                    assertEquals(204, send("POST", url, name + "<" + i + ">", "Content-Type", TEXT).statusCode());
                }
            }
            server.sigkill();
        }
        Path hurt = null;
        byte[] bytes = null;
        try (Stream<Path> files = Files.list(dir.resolve("streams"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                byte[] b = Files.readAllBytes(f);
                if (new String(b, java.nio.charset.StandardCharsets.ISO_8859_1).contains("hurt<2>")) {
                    hurt = f;
                    bytes = b;
                }
            }
        }
        assertTrue(hurt != null, "the damaged stream's file");
        int at = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("hurt<2>") + 4;
        bytes[at] ^= 0x20; // one flipped bit in the third message: two whole records follow it
        Files.write(hurt, bytes);
        try (LaunchedServer server = start(dir, "--fsync", "always")) {
            String base = server.base() + "/v1/stream/damage/";
            for (String method : List.of("GET", "HEAD", "POST", "PUT", "DELETE")) {
                HttpResponse<String> r = send(method, base + "hurt" + (method.equals("GET") ? "?offset=-1" : ""),
                        method.equals("POST") || method.equals("PUT") ? "x" : null, "Content-Type", TEXT);
                assertEquals(500, r.statusCode(), method + ": " + r.body());
                if (!method.equals("HEAD")) {
                    assertTrue(r.body().contains("stream_damaged"), method + ": " + r.body());
                }
            }
            assertEquals(expected("fine", 5), send("GET", base + "fine?offset=-1", null).body());
            // a fork of it is told the same, not "no stream to fork" (404)
            HttpResponse<String> fork = send("PUT", base + "fork", null, "Stream-Forked-From",
                    "/v1/stream/damage/hurt");
            assertEquals(500, fork.statusCode(), fork.body());
            assertTrue(fork.body().contains("stream_damaged"), fork.body());
            assertEquals(404, send("HEAD", base + "fork", null).statusCode(), "no fork made");
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("\niqstream_durable_streams_damaged 1\n"), "one damaged file counted");
            assertTrue(metrics.contains("\niqstream_durable_recovery_cut_bytes 0\n"), "nothing cut");
        }
        assertArrayEquals(bytes, Files.readAllBytes(hurt), "the damaged file is left as it was");
    }

    private static String expected(String prefix, int messages) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < messages; i++) {
            sb.append(prefix).append('<').append(i).append('>');
        }
        return sb.toString();
    }

    private static String expected(int messages) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < messages; i++) {
            sb.append('<').append(i).append('>');
        }
        return sb.toString();
    }

    /**
     * Appends pipelined on one connection, each answered only once durable: every one is answered, in order, and
     * stored once (a request read behind a write still on its way to the disk waits for that answer; it closed the
     * connection before, answering none).
     */
    @Test
    void pipelinedAppendsAreEachAnsweredOnceDurableInOrder(@TempDir Path dir) throws Exception {
        try (LaunchedServer server = start(dir)) {
            String path = "/v1/stream/pipelined";
            assertEquals(201, send("PUT", server.base() + path, null, "Content-Type", TEXT).statusCode());
            int n = 50;
            StringBuilder requests = new StringBuilder();
            for (int i = 0; i < n; i++) {
                String body = "p" + i + ";";
                requests.append("POST ").append(path).append(" HTTP/1.1\r\nHost: t\r\nContent-Type: ")
                        .append(TEXT).append("\r\nContent-Length: ").append(body.length()).append("\r\n\r\n")
                        .append(body);
            }
            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port())) {
                socket.setSoTimeout(30_000);
                socket.getOutputStream().write(requests.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
                java.io.InputStream in = socket.getInputStream();
                StringBuilder answers = new StringBuilder();
                byte[] buf = new byte[8192];
                while (Pattern.compile("HTTP/1.1 ").matcher(answers).results().count() < n) {
                    int r = in.read(buf);
                    if (r < 0) {
                        break;
                    }
                    answers.append(new String(buf, 0, r, java.nio.charset.StandardCharsets.US_ASCII));
                }
                assertEquals(n, Pattern.compile("HTTP/1.1 204 ").matcher(answers).results().count(),
                        "every pipelined append answered 204: " + answers);
            }
            StringBuilder expected = new StringBuilder();
            for (int i = 0; i < n; i++) {
                expected.append("p").append(i).append(';');
            }
            assertEquals(expected.toString(), readAll(server.base() + path), "stored once each, in order");
        }
    }

    /**
     * The storage threads count what they do on {@code /metrics}: every record written (the creation and each
     * append), the batches that carried them (at least one, at most one per record) and the time their flushes
     * took; nothing stays queued once every append is answered. Under {@code --fsync never} nothing is flushed.
     */
    @Test
    void theStorageThreadsCountTheirRecordsBatchesAndFlushes(@TempDir Path dir) throws Exception {
        for (String fsync : List.of("batch", "never")) {
            try (LaunchedServer s = start(dir.resolve(fsync), "--fsync", fsync)) {
                String url = s.base() + "/v1/stream/counted/" + fsync;
                assertEquals(201, send("PUT", url, null, "Content-Type", TEXT).statusCode());
                for (int i = 0; i < 20; i++) {
                    assertEquals(204, send("POST", url, "m" + i + ";", "Content-Type", TEXT).statusCode());
                }
                long records = MetricValues.of(s.base(), "iqstream_disk_records_total");
                long batches = MetricValues.of(s.base(), "iqstream_disk_batches_total");
                assertTrue(records >= 21, fsync + ": records " + records);
                assertTrue(batches >= 1 && batches <= records, fsync + ": batches " + batches + " of " + records);
                assertEquals(0, MetricValues.of(s.base(), "iqstream_disk_queued_bytes"), fsync);
                Matcher flushed = Pattern.compile("(?m)^iqstream_disk_flush_seconds_total (\\S+)$")
                        .matcher(send("GET", s.base() + "/metrics", null).body());
                assertTrue(flushed.find(), "no iqstream_disk_flush_seconds_total");
                double seconds = Double.parseDouble(flushed.group(1));
                assertTrue(fsync.equals("never") ? seconds == 0 : seconds > 0, fsync + ": flushed " + seconds + " s");
            }
        }
    }
}
