package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.readAll;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.DurableHttp;
import io.iqstream.server.testing.LaunchedServer;
import io.iqstream.server.testing.MetricValues;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cold streams ({@code --durability disk --cold-after}): a stream idle that long drops its bytes from memory
 * (its file keeps them), and its next request — a catch-up, a long-poll, an append, a producer's retry, a fork, a
 * DELETE — loads them back first and is answered exactly as if they had stayed. A stream read live never goes
 * cold. Observed through the server's own counters, never through a clock.
 */
class ColdStreamsTest {
    private static final String TEXT = "text/plain";

    /** A server on disk in {@code dir}, open, streams cold after a second idle; {@code more} flags after. */
    private static LaunchedServer start(Path dir, String... more) throws IOException {
        List<String> flags = new ArrayList<>(List.of("--durability", "disk", "--data-dir", dir.toString(), "--auth",
                "none", "--durable-streams-open", "true", "--cold-after", "1s"));
        flags.addAll(List.of(more));
        return LaunchedServer.start(flags.toArray(new String[0]));
    }

    private static long metric(LaunchedServer s, String name) throws Exception {
        return MetricValues.of(s.base(), name);
    }

    /** Waits until {@code n} streams in all have gone cold, and no stream holds a byte in memory. */
    private static void awaitCold(LaunchedServer s, long n) throws Exception {
        Conditions.await(n + " streams cold", 30_000, () -> {
            try {
                return metric(s, "iqstream_durable_streams_cold_total") >= n
                        && metric(s, "iqstream_durable_bytes_held") == 0;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    /** Waits until the cold pages' charge to the budget's copies share is all given back. */
    private static void awaitPagesGivenBack(LaunchedServer s) throws Exception {
        Conditions.await("the pages' charge given back", 30_000, () -> {
            try {
                return metric(s, "iqstream_memory_copies_bytes") == 0;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    /** The first stream file of the data directory {@code dir} (the only one, where a test made one). */
    private static Path firstStreamFile(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir.resolve("streams"))) {
            return files.filter(Files::isRegularFile).findFirst().orElseThrow();
        }
    }

    private static HttpResponse<String> produce(String url, long seq, String body) throws Exception {
        return send("POST", url, body, "Content-Type", TEXT, "Producer-Id", "p", "Producer-Epoch", "0",
                "Producer-Seq", Long.toString(seq));
    }

    @Test
    void aColdStreamIsLoadedForEachKindOfRequestAndAnsweredAsBefore(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir)) {
            String base = s.base() + "/v1/stream/cold/";
            assertEquals(201, send("PUT", base + "a", null, "Content-Type", TEXT).statusCode());
            assertEquals(200, produce(base + "a", 0, "one,").statusCode());
            assertEquals(200, produce(base + "a", 1, "two,").statusCode());
            assertEquals(201, send("PUT", base + "j", "[1,{\"k\":\"v\"}]", "Content-Type", "application/json")
                    .statusCode());
            String tail = send("HEAD", base + "a", null).headers().firstValue("Stream-Next-Offset").orElseThrow();

            awaitCold(s, 2);
            // (on a busy machine a stream may have gone cold, and been loaded, between the requests above)
            long loaded = metric(s, "iqstream_durable_streams_loaded_total");
            // a catch-up: every byte, at the same offsets, read from the file (the stream stays cold)
            HttpResponse<String> r = send("GET", base + "a?offset=-1", null);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals("one,two,", r.body());
            assertEquals(tail, r.headers().firstValue("Stream-Next-Offset").orElseThrow());
            assertEquals("[1,{\"k\":\"v\"}]", send("GET", base + "j?offset=-1", null).body());
            assertEquals(loaded, metric(s, "iqstream_durable_streams_loaded_total"), "a catch-up loads nothing");
            assertEquals(tail, send("HEAD", base + "a", null).headers().firstValue("Stream-Next-Offset")
                    .orElseThrow(), "a HEAD of a cold stream");
            assertEquals(loaded, metric(s, "iqstream_durable_streams_loaded_total"), "a HEAD loads nothing");

            // the producer's state stayed in memory: its retry is a duplicate, its next seq goes on
            assertEquals(204, produce(base + "a", 1, "two,").statusCode(), "the retry of the last seq");
            assertEquals(200, produce(base + "a", 2, "three,").statusCode());
            assertEquals("one,two,three,", readAll(base + "a"));

            // a long-poll at the tail of a cold stream waits without loading it, and gets the next append (which
            // loads it); a long-poll behind the tail is answered from the file, with its cursor
            awaitCold(s, 3);
            String end = send("HEAD", base + "a", null).headers().firstValue("Stream-Next-Offset").orElseThrow();
            long beforePoll = metric(s, "iqstream_durable_streams_loaded_total");
            HttpResponse<String> behind = send("GET", base + "a?offset=-1&live=long-poll", null);
            assertEquals("one,two,three,", behind.body());
            assertTrue(behind.headers().firstValue("Stream-Cursor").isPresent(), "a long-poll's cursor");
            CompletableFuture<HttpResponse<String>> poll = async("GET", base + "a?offset=" + end + "&live=long-poll",
                    null, TEXT);
            Conditions.await("the long-poll waits", 30_000, () -> {
                try {
                    return send("GET", s.base() + "/metrics", null).body()
                            .contains("\niqstream_connections{state=\"idle_reader\"} 1\n");
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(!poll.isDone(), "it waits at the tail");
            assertEquals(beforePoll, metric(s, "iqstream_durable_streams_loaded_total"), "waiting loads nothing");
            assertEquals(0, metric(s, "iqstream_durable_bytes_held"), "the stream stays cold while it waits");
            assertEquals(200, produce(base + "a", 3, "four,").statusCode());
            assertEquals("four,", poll.get().body());
            assertEquals(beforePoll + 1, metric(s, "iqstream_durable_streams_loaded_total"), "the append loaded it");

            // a fork of a cold source reads the source's bytes below its fork point, then its own
            awaitCold(s, 4);
            assertEquals(201, send("PUT", base + "f", null, "Stream-Forked-From", "/v1/stream/cold/a").statusCode());
            assertEquals(204, send("POST", base + "f", "mine", "Content-Type", TEXT).statusCode());
            assertEquals("one,two,three,four,mine", readAll(base + "f"));

            // a DELETE of a cold stream that no fork holds frees it
            assertEquals(204, send("DELETE", base + "f", null).statusCode());
            awaitCold(s, 5);
            assertEquals(204, send("DELETE", base + "a", null).statusCode());
            assertEquals(404, send("GET", base + "a?offset=-1", null).statusCode());
            s.assertNoLeaks();
        }
    }

    /**
     * After a restart a stream that is neither a fork nor a fork's source starts cold: the start holds none of its
     * bytes, its reads are answered from its file, and its first write loads them; a source and its fork start in
     * memory.
     */
    @Test
    void aRestartLeavesStreamsColdUntilTheyAreRead(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir)) {
            String base = s.base() + "/v1/stream/restart/";
            assertEquals(201, send("PUT", base + "plain", "plain bytes", "Content-Type", TEXT).statusCode());
            assertEquals(201, send("PUT", base + "src", "source;", "Content-Type", TEXT).statusCode());
            assertEquals(201, send("PUT", base + "fork", null, "Stream-Forked-From", "/v1/stream/restart/src")
                    .statusCode());
        }
        try (LaunchedServer s = start(dir)) {
            String base = s.base() + "/v1/stream/restart/";
            assertEquals(3, metric(s, "iqstream_durable_streams_recovered"));
            assertEquals("source;".length(), metric(s, "iqstream_durable_bytes_held"), "the source only");
            assertEquals("plain bytes", readAll(base + "plain"));
            assertEquals(1, metric(s, "iqstream_durable_cold_reads_total"), "read from the file");
            assertEquals(0, metric(s, "iqstream_durable_streams_loaded_total"));
            assertEquals(204, send("POST", base + "plain", ";more", "Content-Type", TEXT).statusCode());
            assertEquals(1, metric(s, "iqstream_durable_streams_loaded_total"), "a write loads it");
            assertEquals("plain bytes;more", readAll(base + "plain"));
            assertEquals("source;", readAll(base + "fork"));
        }
    }

    /** Every page of a stream, read from {@code -1} on: the answers, each as a client sees it. */
    private static List<HttpResponse<String>> pages(String url, String... headers) throws Exception {
        List<HttpResponse<String>> pages = new ArrayList<>();
        String offset = "-1";
        while (true) {
            HttpResponse<String> r = send("GET", url + "?offset=" + offset, null, headers);
            assertEquals(200, r.statusCode(), r.body());
            pages.add(r);
            if (r.headers().firstValue("Stream-Up-To-Date").isPresent()) {
                return pages;
            }
            offset = r.headers().firstValue("Stream-Next-Offset").orElseThrow();
        }
    }

    private static void assertSamePages(List<HttpResponse<String>> expected, List<HttpResponse<String>> got) {
        assertEquals(expected.size(), got.size(), "pages");
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i).body(), got.get(i).body(), "page " + i);
            for (String h : List.of("Stream-Next-Offset", "Stream-Up-To-Date", "Stream-Closed", "ETag",
                    "Content-Type", "Cache-Control")) {
                assertEquals(expected.get(i).headers().firstValue(h), got.get(i).headers().firstValue(h),
                        h + " of page " + i);
            }
        }
    }

    /**
     * A catch-up of a cold stream is answered from its file, a page at a time, the stream left cold: the same
     * pages, bytes and headers as while it was in memory — a long stream of small messages and one larger than a
     * page, across the index's strides, a JSON stream, a closed one, after a restart too — and a 304 for an ETag
     * already served. Nothing is loaded and no byte of the streams is held; the pages' charge is given back.
     */
    @Test
    void aCatchUpOfAColdStreamIsReadFromItsFilePageByPage(@TempDir Path dir) throws Exception {
        List<HttpResponse<String>> warmText;
        List<HttpResponse<String>> warmJson;
        try (LaunchedServer s = start(dir)) {
            String base = s.base() + "/v1/stream/pages/";
            assertEquals(201, send("PUT", base + "text", null, "Content-Type", TEXT).statusCode());
            for (int i = 0; i < 240; i++) {
                String m = i + ":" + "t".repeat(1 + i * 37 % 4000) + ";";
                assertEquals(200, produce(base + "text", i, m).statusCode());
                if (i == 120) {
                    assertEquals(204, send("POST", base + "text", "L".repeat(300 * 1024), "Content-Type", TEXT)
                            .statusCode());
                }
            }
            assertEquals(201, send("PUT", base + "json", null, "Content-Type", "application/json").statusCode());
            for (int i = 0; i < 50; i++) {
                assertEquals(204, send("POST", base + "json", "[{\"n\":" + i + ",\"s\":\"" + "j".repeat(i * 100)
                        + "\"}]", "Content-Type", "application/json").statusCode());
            }
            assertEquals(204, send("POST", base + "json", null, "Stream-Closed", "true").statusCode());
            warmText = pages(base + "text");
            warmJson = pages(base + "json");
            assertTrue(warmText.size() >= 2, "several pages: " + warmText.size());
            assertEquals("true", warmJson.get(warmJson.size() - 1).headers().firstValue("Stream-Closed")
                    .orElseThrow());

            awaitCold(s, 2);
            long loaded = metric(s, "iqstream_durable_streams_loaded_total");
            long reads = metric(s, "iqstream_durable_cold_reads_total");
            assertSamePages(warmText, pages(base + "text"));
            assertSamePages(warmJson, pages(base + "json"));
            assertSamePages(warmText, pages(base + "text")); // again, with the index the first read built
            assertEquals(reads + 2 * warmText.size() + warmJson.size(),
                    metric(s, "iqstream_durable_cold_reads_total"), "each page read from the file");
            assertEquals(loaded, metric(s, "iqstream_durable_streams_loaded_total"), "nothing loaded");
            assertEquals(0, metric(s, "iqstream_durable_bytes_held"), "the streams stayed cold");

            String etag = warmText.get(1).headers().firstValue("ETag").orElseThrow();
            String offset = warmText.get(0).headers().firstValue("Stream-Next-Offset").orElseThrow();
            assertEquals(304, send("GET", base + "text?offset=" + offset, null, "If-None-Match", etag)
                    .statusCode());
            awaitPagesGivenBack(s);
            s.assertNoLeaks();
        }
        try (LaunchedServer s = start(dir)) {
            String base = s.base() + "/v1/stream/pages/";
            assertSamePages(warmText, pages(base + "text"));
            assertSamePages(warmJson, pages(base + "json"));
            assertEquals(0, metric(s, "iqstream_durable_streams_loaded_total"), "nothing loaded after a restart");
            assertEquals(0, metric(s, "iqstream_durable_bytes_held"));
            s.assertNoLeaks();
        }
    }

    /**
     * A cold stream's page is charged to the memory budget's share for readers of old history (a quarter of it)
     * before it is read into memory: a page larger than that share is refused 503 with Retry-After, the stream
     * left cold and nothing held; a page within it is served, and its charge given back once written.
     */
    @Test
    void aColdPageOverTheCopiesShareIs503(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir, "--memory-budget", "1m")) {
            String base = s.base() + "/v1/stream/share/";
            // two messages of 200 KiB: one page (the first is below its 256 KiB), over the copies' 256 KiB
            String message = "L".repeat(200 * 1024);
            assertEquals(201, send("PUT", base + "large", message, "Content-Type", TEXT).statusCode());
            assertEquals(204, send("POST", base + "large", message, "Content-Type", TEXT).statusCode());
            assertEquals(201, send("PUT", base + "small", "small", "Content-Type", TEXT).statusCode());
            awaitCold(s, 2);
            HttpResponse<String> r = send("GET", base + "large?offset=-1", null);
            assertEquals(503, r.statusCode(), r.body());
            assertEquals("1", r.headers().firstValue("Retry-After").orElseThrow());
            assertEquals("small", send("GET", base + "small?offset=-1", null).body());
            assertEquals(0, metric(s, "iqstream_durable_streams_loaded_total"), "nothing loaded");
            assertEquals(0, metric(s, "iqstream_durable_bytes_held"), "nothing held");
            awaitPagesGivenBack(s);
            s.assertNoLeaks();
        }
    }

    /**
     * A write to a cold stream loads it, each message charged before it is copied back: with the budget held by
     * another stream (read live, so it stays in memory), the load is refused 503 with Retry-After, holds nothing
     * and gives its charge back; once the other stream is deleted, the same write loads it and is stored.
     */
    @Test
    void aLoadPastTheBudgetIs503AndHoldsNothing(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir, "--memory-budget", "1m")) {
            String base = s.base() + "/v1/stream/load/";
            String message = "L".repeat(200 * 1024);
            assertEquals(201, send("PUT", base + "big", null, "Content-Type", TEXT).statusCode());
            for (int i = 0; i < 3; i++) {
                assertEquals(204, send("POST", base + "big", message, "Content-Type", TEXT).statusCode());
            }
            awaitCold(s, 1);
            assertEquals(201, send("PUT", base + "filler", null, "Content-Type", TEXT).statusCode());
            for (int i = 0; i < 3; i++) {
                assertEquals(204, send("POST", base + "filler", message, "Content-Type", TEXT).statusCode());
            }
            HttpResponse<Stream<String>> sse = DurableHttp.lines(base + "filler?offset=-1&live=sse");
            assertTrue(DurableHttp.readUntil(sse.body().iterator(), "upToDate", new StringBuilder()));
            long held = metric(s, "iqstream_durable_bytes_held");
            assertEquals(3L * message.length(), held, "the filler only");

            HttpResponse<String> r = send("POST", base + "big", "x", "Content-Type", TEXT);
            assertEquals(503, r.statusCode(), r.body());
            assertEquals("1", r.headers().firstValue("Retry-After").orElseThrow());
            assertEquals(held, metric(s, "iqstream_durable_bytes_held"), "the refused load holds nothing");
            assertEquals(0, metric(s, "iqstream_durable_streams_loaded_total"));

            sse.body().close();
            assertEquals(204, send("DELETE", base + "filler", null).statusCode());
            assertEquals(204, send("POST", base + "big", "x", "Content-Type", TEXT).statusCode());
            assertEquals(1, metric(s, "iqstream_durable_streams_loaded_total"));
            assertEquals(message.repeat(3) + "x", readAll(base + "big"));
            s.assertNoLeaks();
        }
    }

    /**
     * A cold stream whose file was damaged while the server ran (a byte flipped in a middle record) answers its
     * catch-up 500, never the pages before the damage as if they were the stream; another cold stream is read.
     */
    @Test
    void aColdReadOfADamagedFileAnswers500(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir, "--workers", "1")) {
            String base = s.base() + "/v1/stream/damage/";
            assertEquals(201, send("PUT", base + "hurt", null, "Content-Type", TEXT).statusCode());
            for (int i = 0; i < 3; i++) {
                assertEquals(204, send("POST", base + "hurt", i + "x".repeat(100), "Content-Type", TEXT)
                        .statusCode());
            }
            awaitCold(s, 1);
            Path file = firstStreamFile(dir);
            assertEquals(201, send("PUT", base + "whole", "intact", "Content-Type", TEXT).statusCode());
            awaitCold(s, 2);
            byte[] bytes = Files.readAllBytes(file);
            int middle = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("1xxx");
            assertTrue(middle > 0, "the second message is in the file");
            bytes[middle + 10] ^= 1;
            Files.write(file, bytes);
            HttpResponse<String> r = send("GET", base + "hurt?offset=-1", null);
            assertEquals(500, r.statusCode(), r.body());
            assertEquals("intact", send("GET", base + "whole?offset=-1", null).body());
            s.assertNoLeaks();
        }
    }

    /** A stream with an SSE reader stays in memory, however long it is idle; another idle one goes cold. */
    @Test
    void aStreamReadLiveNeverGoesCold(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir)) {
            String base = s.base() + "/v1/stream/live/";
            assertEquals(201, send("PUT", base + "read", "first;", "Content-Type", TEXT).statusCode());
            HttpResponse<Stream<String>> sse = DurableHttp.lines(base + "read?offset=-1&live=sse");
            Iterator<String> lines = sse.body().iterator();
            StringBuilder data = new StringBuilder();
            assertTrue(DurableHttp.readUntil(lines, "upToDate", data));
            assertEquals("data:first;", data.toString());
            // made after the reader began: once it is cold, the read stream has been idle at least as long
            long cold = metric(s, "iqstream_durable_streams_cold_total");
            long loaded = metric(s, "iqstream_durable_streams_loaded_total");
            assertEquals(201, send("PUT", base + "idle", "x", "Content-Type", TEXT).statusCode());
            Conditions.await("a stream cold", 30_000, () -> {
                try {
                    return metric(s, "iqstream_durable_streams_cold_total") > cold;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            // the one that went cold is the idle one: the read stream's bytes are all that memory holds
            assertEquals("first;".length(), metric(s, "iqstream_durable_bytes_held"), "the read stream's bytes");
            assertEquals(204, send("POST", base + "read", "second;", "Content-Type", TEXT).statusCode());
            data.setLength(0);
            assertTrue(DurableHttp.readUntil(lines, "upToDate", data));
            assertEquals("data:second;", data.toString());
            assertEquals(loaded, metric(s, "iqstream_durable_streams_loaded_total"), "nothing loaded");
            sse.body().close();
        }
    }

    /**
     * A closed stream takes no more appends: once nothing has read it for a second it goes cold, however long
     * {@code --cold-after} is, and its catch-up is read from its file; an open stream idle as long stays in memory.
     */
    @Test
    void aClosedStreamGoesColdOnceItsReadersLeave(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = LaunchedServer.start("--durability", "disk", "--data-dir", dir.toString(), "--auth",
                "none", "--durable-streams-open", "true", "--cold-after", "1h")) {
            String base = s.base() + "/v1/stream/ended/";
            assertEquals(201, send("PUT", base + "open", "still;", "Content-Type", TEXT).statusCode());
            assertEquals(201, send("PUT", base + "done", "answer;", "Content-Type", TEXT).statusCode());
            assertEquals(204, send("POST", base + "done", "", "Content-Type", TEXT, "Stream-Closed", "true")
                    .statusCode());
            Conditions.await("the closed stream cold", 30_000, () -> {
                try {
                    return metric(s, "iqstream_durable_streams_cold_total") == 1;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            // the open stream's bytes are all memory holds
            assertEquals("still;".length(), metric(s, "iqstream_durable_bytes_held"));
            HttpResponse<String> page = send("GET", base + "done?offset=-1", null);
            assertEquals(200, page.statusCode());
            assertEquals("answer;", page.body());
            assertEquals("true", page.headers().firstValue("Stream-Closed").orElse(null));
            assertEquals(1, metric(s, "iqstream_durable_cold_reads_total"), "read from its file");
            assertEquals(0, metric(s, "iqstream_durable_streams_loaded_total"), "not loaded");
        }
    }

    /**
     * A request on a cold stream holds its body while the stream's file is read, and the body stays charged to the
     * budget until the request is served: a client cannot make the server hold bodies it does not count by sending
     * them to cold streams. The load is held back on a real file system: one worker, so one storage thread, kept
     * busy by a catch-up of another cold stream whose file was swapped for a named pipe (its read waits in the
     * pipe's open until the test opens the other end); the load is queued behind it. The metrics answered while it
     * waits are answered after the request was handed to the load.
     */
    @Test
    void aBodyWaitingForAColdStreamsLoadStaysCharged(@TempDir Path dir) throws Exception {
        try (LaunchedServer s = start(dir, "--workers", "1")) {
            String blocker = s.base() + "/v1/stream/cold/blocker";
            assertEquals(201, send("PUT", blocker, "b", "Content-Type", TEXT).statusCode());
            awaitCold(s, 1);
            Path file = firstStreamFile(dir);
            String url = s.base() + "/v1/stream/cold/held";
            assertEquals(201, send("PUT", url, null, "Content-Type", TEXT).statusCode());
            assertEquals(204, send("POST", url, "one,", "Content-Type", TEXT).statusCode());
            awaitCold(s, 2);
            Path aside = dir.resolve("blocker.aside");
            Files.move(file, aside);
            Process mkfifo = new ProcessBuilder("mkfifo", file.toString()).inheritIO().start();
            assertEquals(0, mkfifo.waitFor(), "mkfifo");
            CompletableFuture<HttpResponse<String>> blocked = async("GET", blocker + "?offset=-1", null, TEXT);
            long used0 = metric(s, "iqstream_memory_used_bytes");
            String body = "b".repeat(512 * 1024);
            // a JSON body on a text stream: once loaded it is refused (409), nothing written
            CompletableFuture<HttpResponse<String>> post = async("POST", url, body, "application/json");
            Conditions.await("the body charged while the load waits", 30_000, () -> {
                try {
                    return metric(s, "iqstream_memory_used_bytes") - used0 >= body.length();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(!post.isDone(), "the load waits behind the blocked read");
            try (OutputStream pipe = Files.newOutputStream(file)) { // lets the blocked read go on (to fail)
                pipe.flush();
            }
            assertEquals(500, blocked.get(30, TimeUnit.SECONDS).statusCode(), "a pipe is no stream file");
            HttpResponse<String> r = post.get(30, TimeUnit.SECONDS);
            assertEquals(409, r.statusCode(), r.body());
            Files.delete(file);
            Files.move(aside, file);
            Conditions.await("the body's charge given back", 30_000, () -> {
                try {
                    return metric(s, "iqstream_memory_used_bytes") - used0 < body.length();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertEquals("one,", send("GET", url + "?offset=-1", null).body());
        }
    }

    private static CompletableFuture<HttpResponse<String>> async(String method, String url, String body,
            String contentType) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return send(method, url, body, "Content-Type", contentType);
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
