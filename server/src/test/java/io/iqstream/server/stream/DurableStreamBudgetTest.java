package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.run.ProducerLedger;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.TestServer;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Durable streams are held under the server's one memory budget: appends past it get 503 with Retry-After (never
 * an OOM), the bytes are freed by DELETE and by expiry, after which appends are accepted again; /metrics counts them.
 */
class DurableStreamBudgetTest {
    private static final String TEXT = "Content-Type";

    @Test
    void overBudgetIs503ThenFreedByDeleteAndExpiry() throws Exception {
        long budget = 1 << 20;
        try (TestServer server = TestServer.start("--memory-budget", Long.toString(budget),
                "--durable-streams-open", "true")) {
            String base = server.base() + "/v1/stream/budget/";
            String chunk = "x".repeat(64 * 1024);
            assertEquals(201, send("PUT", base + "a", null, TEXT, "text/plain").statusCode());
            int accepted = 0;
            HttpResponse<String> r = null;
            for (int i = 0; i < 64; i++) {
                r = send("POST", base + "a", chunk, TEXT, "text/plain");
                if (r.statusCode() != 204) {
                    break;
                }
                accepted++;
            }
            assertEquals(503, r.statusCode(), "refused past the budget: " + r.body());
            assertEquals("1", r.headers().firstValue("Retry-After").orElse(""));
            long held = (long) accepted * chunk.length();
            assertTrue(held <= budget && held >= budget / 2,
                    accepted + " appends of 64 KiB held within a 1 MiB budget (and its headroom)");
            // a stream of ordinary size may still use the headroom (as a run may), up to the hard limit
            assertEquals(201, send("PUT", base + "b", null, TEXT, "text/plain").statusCode());
            int intoHeadroom = 0;
            while ((r = send("POST", base + "b", chunk, TEXT, "text/plain")).statusCode() == 204) {
                intoHeadroom++;
                assertTrue(intoHeadroom < 16, "the headroom is a quarter of the budget");
            }
            assertEquals(503, r.statusCode());
            held += (long) intoHeadroom * chunk.length();
            assertTrue(held <= budget + budget / 4, held + " bytes held within the budget and its headroom");
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("iqstream_durable_bytes_held " + held), metrics);
            // DELETE frees it: appends go through again
            assertEquals(204, send("DELETE", base + "a", null).statusCode());
            assertEquals(204, send("POST", base + "b", chunk, TEXT, "text/plain").statusCode());
            assertEquals(204, send("DELETE", base + "b", null).statusCode());
            assertEquals(201, send("PUT", base + "b", null, TEXT, "text/plain").statusCode());
            // expiry frees too: a stream with a 1 s TTL fills the budget, then is swept
            assertEquals(201, send("PUT", base + "ttl", null, TEXT, "text/plain", "Stream-TTL", "1").statusCode());
            while (send("POST", base + "ttl", chunk, TEXT, "text/plain").statusCode() == 204) {
                accepted++;
            }
            assertTrue(accepted > 0);
            long lastTouchedMs = System.currentTimeMillis(); // the server touched it last before this
            // DURABLE-STREAMS.md: an expired stream is freed "by its worker's sweep within a second" — the sweep runs
            // every second, and the first one that begins after the expiry frees it. Checked by the sweep's own
            // count, not a clock: wait out the TTL (a lower bound), read the owner's count, and once it has risen by
            // two, a sweep has begun and ended since the expiry. Nothing touches the stream meanwhile (a request
            // would free it itself).
            assertEquals(1000, DurableStreams.SWEEP_MS, "the sweep's period is the documented second");
            while (System.currentTimeMillis() <= lastTouchedMs + 1000) {
                Thread.sleep(50); // waiting out the 1 s TTL: a lower bound
            }
            DurableStreams streams = server.server().context().durableStreams();
            var owner = streams.ownerOf("/v1/stream/budget/ttl");
            long sweepsAfterExpiry = streams.sweepsBegun(owner);
            Conditions.await("two sweeps of the owner begin", 60_000,
                    () -> streams.sweepsBegun(owner) >= sweepsAfterExpiry + 2);
            String held2 = send("GET", server.base() + "/metrics", null).body();
            assertTrue(held2.contains("iqstream_durable_bytes_held 0\n"), "the first sweep after the expiry freed the"
                    + " expired stream's bytes: " + held2);
            assertTrue(held2.contains("iqstream_durable_streams_expired_total 1\n"), held2);
            // and the budget has them back: a large stream fills it again
            assertEquals(201, send("PUT", base + "c", null, TEXT, "text/plain").statusCode());
            for (int i = 0; i < 8; i++) {
                assertEquals(204, send("POST", base + "c", chunk, TEXT, "text/plain").statusCode());
            }
            assertEquals(404, send("HEAD", base + "ttl", null).statusCode());
        }
    }

    @Test
    void liveReadersTakeSubscriberSlots() throws Exception {
        try (TestServer server = TestServer.start("--max-subscribers", "1", "--durable-streams-open", "true",
                "--durable-streams-long-poll", "10s")) {
            String url = server.base() + "/v1/stream/slots";
            HttpResponse<String> created = send("PUT", url, null, TEXT, "text/plain");
            String tail = created.headers().firstValue("Stream-Next-Offset").orElseThrow();
            CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return send("GET", url + "?offset=" + tail + "&live=long-poll", null);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long deadline = System.nanoTime() + 10_000_000_000L;
            HttpResponse<String> second;
            Thread.sleep(200); // let the first long-poll take the slot; an early second one just waits 10 s
            do { // until the first long-poll holds the one slot
                second = send("GET", url + "?offset=" + tail + "&live=long-poll", null);
            } while (second.statusCode() != 503 && System.nanoTime() < deadline);
            assertEquals(503, second.statusCode(), "the second live reader is refused");
            assertEquals("1", second.headers().firstValue("Retry-After").orElse(""));
            // a catch-up read needs no slot
            assertEquals(200, send("GET", url + "?offset=-1", null).statusCode());
            assertEquals(204, send("POST", url, "x", TEXT, "text/plain").statusCode());
            assertEquals("x", first.get(20, TimeUnit.SECONDS).body());
            // the slot is back once the long-poll is answered
            assertEquals(200, send("GET", url + "?offset=" + tail + "&live=long-poll", null).statusCode());
        }
    }

    /**
     * A stranger picks producer ids and their length: each new producer is charged to the budget, so a stream fed
     * a thousand producers with ids of several KiB is refused (503) once the budget is full, not left holding
     * megabytes of ids the budget never saw.
     */
    @Test
    void producersAreChargedSoLongIdsAreRefusedPastTheBudget() throws Exception {
        long budget = 1 << 20;
        try (TestServer server = TestServer.start("--memory-budget", Long.toString(budget),
                "--durable-streams-open", "true")) {
            String url = server.base() + "/v1/stream/budget/producers";
            assertEquals(201, send("PUT", url, null, TEXT, "text/plain").statusCode());
            String pad = "p".repeat(6 * 1024);
            int accepted = 0;
            HttpResponse<String> r = null;
            for (int i = 0; i < ProducerLedger.MAX_PRODUCERS; i++) {
                r = send("POST", url, "x", TEXT, "text/plain", "Producer-Id", pad + i, "Producer-Epoch", "0",
                        "Producer-Seq", "0");
                if (r.statusCode() != 200) {
                    break;
                }
                accepted++;
            }
            assertEquals(503, r.statusCode(), "a producer past the budget is refused: " + r.body());
            long charged = (long) accepted * (2L * (pad.length() + 4) + 128);
            assertTrue(charged <= budget + budget / 4, accepted + " producers of 6 KiB ids held within the budget");
            assertTrue(accepted > 20, "the budget took the producers it has room for: " + accepted);
            // the stream's DELETE gives the producers' bytes back: a new stream takes them again
            assertEquals(204, send("DELETE", url, null).statusCode());
            assertEquals(201, send("PUT", url + "2", null, TEXT, "text/plain").statusCode());
            assertEquals(200, send("POST", url + "2", "x", TEXT, "text/plain", "Producer-Id", pad, "Producer-Epoch",
                    "0", "Producer-Seq", "0").statusCode());
        }
    }

    /**
     * An idempotent producer's append refused after the ledger's check — over the budget, too large, the wrong
     * content type — leaves the ledger as it was: its retry is stored (200), never answered as a duplicate (204) of a
     * message that was never stored, and the message is read back exactly once.
     */
    @Test
    void aRefusedProducerAppendIsStoredOnItsRetryAndReadOnce() throws Exception {
        long budget = 1 << 20;
        try (TestServer server = TestServer.start("--memory-budget", Long.toString(budget),
                "--durable-streams-open", "true", "--max-run-bytes", "256k", "--max-event-bytes", "256k")) {
            String base = server.base() + "/v1/stream/refused/";
            String[] producer = {"Producer-Id", "p", "Producer-Epoch", "0"};
            assertEquals(201, send("PUT", base + "s", null, TEXT, "text/plain").statusCode());
            // the wrong content type: 409, then the retry with the right one is stored
            assertEquals(409, producerPost(base + "s", "one;", "application/json", producer, 0).statusCode());
            assertEquals(200, producerPost(base + "s", "one;", "text/plain", producer, 0).statusCode());
            // too large for what the stream may still hold (not for one request): 413, then the retry of that
            // seq with a body that fits is stored
            assertEquals(413, producerPost(base + "s", "x".repeat(256 * 1024 - 2), "text/plain", producer, 1)
                    .statusCode());
            assertEquals(200, producerPost(base + "s", "two;", "text/plain", producer, 1).statusCode());
            // over the budget: another stream fills it, the append is 503; once that stream is gone, the retry
            // is stored
            // streams of ordinary size fill the budget, then their second chunks its headroom
            String chunk = "f".repeat(64 * 1024);
            int fillers = 0;
            while (send("PUT", base + "filler" + fillers, null, TEXT, "text/plain").statusCode() == 201) {
                assertTrue(fillers < 64, "the budget refuses within 64 streams of 64 KiB");
                fillers++;
                if (send("POST", base + "filler" + (fillers - 1), chunk, TEXT, "text/plain").statusCode() != 204) {
                    break;
                }
            }
            for (int i = 0; i < fillers; i++) {
                if (send("POST", base + "filler" + i, chunk, TEXT, "text/plain").statusCode() != 204) {
                    break;
                }
            }
            HttpResponse<String> r = producerPost(base + "s", chunk, "text/plain", producer, 2);
            assertEquals(503, r.statusCode(), r.body());
            for (int i = 0; i < fillers; i++) {
                assertEquals(204, send("DELETE", base + "filler" + i, null).statusCode());
            }
            assertEquals(200, producerPost(base + "s", "three;", "text/plain", producer, 2).statusCode(),
                    "the retry after 503 is stored, not taken for a duplicate");
            assertEquals(204, producerPost(base + "s", "three;", "text/plain", producer, 2).statusCode(),
                    "and its own retry is the duplicate");
            String body = send("GET", base + "s?offset=-1", null).body();
            assertTrue(body.startsWith("one;two;"), body.substring(0, Math.min(40, body.length())));
            assertTrue(body.endsWith("three;"), "the refused append's retry is there");
            assertEquals(1, body.split("three;", -1).length - 1, "once");
        }
    }

    private static HttpResponse<String> producerPost(String url, String body, String type, String[] producer,
            long seq) throws Exception {
        return send("POST", url, body, TEXT, type, producer[0], producer[1], producer[2], producer[3],
                "Producer-Seq", Long.toString(seq));
    }
}
