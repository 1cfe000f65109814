package io.iqstream.server.hostile;

import static io.iqstream.server.testing.DurableHttp.bearer;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.run.ProducerLedger;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A hostile user of the Durable Streams endpoint, over real HTTP: a fork of a stream it may not read, streams and
 * headers long enough to run the heap out while the budget is almost empty, a chain of thousands of forks, far dates
 * and huge TTLs, and a thousand producers that would push an honest producer's epoch fence out. Each is refused as
 * the protocol and docs/SECURITY.md say, and nothing else breaks.
 */
class HostileDurableStreamsTest {
    private static final String TEXT = "text/plain";
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);

    /** A token with every right on {@code att/*} and none elsewhere: the attacker's. */
    private static String attacker() {
        return MINTER.mint(List.of("att/*"), List.of("att/*"), Duration.ofHours(1));
    }

    @Test
    void aForkOfAStreamItsCallerMayNotReadIsAnsweredAsIfTheSourceDidNotExist() throws Exception {
        try (TestServer server = TestServer.start()) {
            String base = server.base() + "/v1/stream/";
            String owner = MINTER.mint(List.of("victim/*"), List.of("victim/*"), Duration.ofHours(1));
            assertEquals(201, send("PUT", base + "victim/chat", "the victim's secret",
                    bearer(owner, "Content-Type", TEXT)).statusCode());
            String att = attacker();
            assertEquals(403, send("GET", base + "victim/chat?offset=-1", null, bearer(att)).statusCode());
            HttpResponse<String> fork = send("PUT", base + "att/copy", null,
                    bearer(att, "Stream-Forked-From", "/v1/stream/victim/chat"));
            HttpResponse<String> none = send("PUT", base + "att/copy", null,
                    bearer(att, "Stream-Forked-From", "/v1/stream/victim/absent"));
            assertEquals(404, fork.statusCode(), "a source the caller may not read: " + fork.body());
            assertEquals(404, none.statusCode());
            assertEquals(none.body().replace("absent", "chat"), fork.body(), "the same answer as for no stream");
            assertEquals(none.headers().map().keySet(), fork.headers().map().keySet());
            HttpResponse<String> read = send("GET", base + "att/copy?offset=-1", null, bearer(att));
            assertEquals(404, read.statusCode(), "nothing was created: " + read.body());
            // nothing pins the victim: its owner deletes it and takes its path again
            assertEquals(204, send("DELETE", base + "victim/chat", null, bearer(owner)).statusCode());
            assertEquals(201, send("PUT", base + "victim/chat", null, bearer(owner, "Content-Type", TEXT))
                    .statusCode());
            // a caller who may read the source forks it as before
            assertEquals(204, send("POST", base + "victim/chat", "hello", bearer(owner, "Content-Type", TEXT))
                    .statusCode());
            String reader = MINTER.mint(List.of("att/*"), List.of("att/*", "victim/*"), Duration.ofHours(1));
            assertEquals(201, send("PUT", base + "att/mine", null,
                    bearer(reader, "Stream-Forked-From", "/v1/stream/victim/chat")).statusCode());
            assertEquals("hello", send("GET", base + "att/mine?offset=-1", null, bearer(reader)).body());
        }
    }

    /**
     * Streams with 7.9 KB paths and 15 KB Stream-Seq values: each holds about 40 KB of heap. Against the heap the
     * launcher gives a 64m budget (48m), the heap's share is refused with 503 long before the heap runs out, while
     * the budget itself is nearly empty; an honest run streams whole beside it and an honest stream takes appends.
     */
    @Test
    void longPathsAndLongSeqsAre503BeforeTheHeapRunsOut() throws Exception {
        try (HostileServer server = HostileServer.start("--memory-budget", "64m");
                AttackWindow w = AttackWindow.open(server)) {
            String base = "http://127.0.0.1:" + server.port() + "/v1/stream/";
            String writer = Tokens.publisher("*");
            assertEquals(201, send("PUT", base + "honest", null, bearer(writer, "Content-Type", TEXT)).statusCode());
            String longName = "p".repeat(7_900);
            String seqPad = "s".repeat(15_000);
            int created = 0;
            HttpResponse<String> refused = null;
            for (int i = 0; i < 6_000 && refused == null && server.isAlive(); i++) {
                HttpResponse<String> r = send("PUT", base + longName + i, null, bearer(writer, "Content-Type", TEXT));
                if (r.statusCode() != 201) {
                    refused = r;
                    break;
                }
                created++;
                r = send("POST", base + longName + i, "x", bearer(writer, "Content-Type", TEXT,
                        "Stream-Seq", seqPad + i));
                if (r.statusCode() != 204) {
                    refused = r;
                }
            }
            server.assertSound();
            assertTrue(refused != null, "6,000 streams of 23 KB of strings each were all taken " + server.describe());
            assertEquals(503, refused.statusCode(), refused.body());
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""));
            long heap = server.metric("iqstream_memory_heap_bytes");
            long share = server.metric("iqstream_memory_heap_share_bytes");
            assertTrue(heap > share / 2 && heap <= share, heap + " of the heap share " + share + " taken");
            assertTrue(created > 100, "the share took the streams it has room for: " + created);
            // the honest user's stream still takes appends (its bytes are the budget's, which is nearly empty)
            assertEquals(204, send("POST", base + "honest", "still here", bearer(writer, "Content-Type", TEXT))
                    .statusCode());
            assertEquals("still here", send("GET", base + "honest?offset=-1", null,
                    bearer(Tokens.subscriber("*"))).body());
            w.assertSurvived();
        }
    }

    /** Producers with 7 KB ids on stream after stream: the heap share refuses them (503), the heap never runs out. */
    @Test
    void longProducerIdsAre503BeforeTheHeapRunsOut() throws Exception {
        try (HostileServer server = HostileServer.start("--memory-budget", "64m");
                AttackWindow w = AttackWindow.open(server)) {
            String base = "http://127.0.0.1:" + server.port() + "/v1/stream/ids-";
            String writer = Tokens.publisher("*");
            String pad = "i".repeat(7_000);
            HttpResponse<String> refused = null;
            int accepted = 0;
            for (int stream = 0; stream < 20 && refused == null && server.isAlive(); stream++) {
                assertEquals(201, send("PUT", base + stream, null, bearer(writer, "Content-Type", TEXT))
                        .statusCode());
                for (int p = 0; p < ProducerLedger.MAX_PRODUCERS; p++) {
                    HttpResponse<String> r = send("POST", base + stream, "x", bearer(writer, "Content-Type", TEXT,
                            "Producer-Id", pad + p, "Producer-Epoch", "0", "Producer-Seq", "0"));
                    if (r.statusCode() != 200) {
                        refused = r;
                        break;
                    }
                    accepted++;
                }
            }
            server.assertSound();
            assertTrue(refused != null, accepted + " producers of 7 KB ids were all taken " + server.describe());
            assertEquals(503, refused.statusCode(), "after " + accepted + ": " + refused.body());
            assertTrue(server.metric("iqstream_memory_heap_bytes") <= server.metric("iqstream_memory_heap_share_bytes"));
            w.assertSurvived();
        }
    }

    @Test
    void aChainOfThousandsOfForksIsReadAndFreedWhole() throws Exception {
        // one worker: every link's free runs on the same loop, where a recursive cascade would go deepest
        int depth = 20_000;
        try (TestServer server = TestServer.start("--durable-streams-open", "true", "--workers", "1")) {
            String base = server.base() + "/v1/stream/chain/";
            assertEquals(201, send("PUT", base + "0", "a", "Content-Type", TEXT).statusCode());
            for (int i = 1; i <= depth; i++) {
                HttpResponse<String> r = send("PUT", base + i, null, "Stream-Forked-From", "/v1/stream/chain/" + (i - 1));
                assertEquals(201, r.statusCode(), "fork " + i + ": " + r.body());
            }
            assertEquals(204, send("POST", base + depth, "z", "Content-Type", TEXT).statusCode());
            HttpResponse<String> read = send("GET", base + depth + "?offset=-1", null);
            assertEquals(200, read.statusCode(), read.body());
            assertEquals("az", read.body());
            // every stream deleted from the root down: each is held by its fork, so the last delete frees them all
            for (int i = 0; i <= depth; i++) {
                assertEquals(204, send("DELETE", base + i, null).statusCode(), "delete " + i);
            }
            // the frees of ancestors on the other worker run there, as tasks: polled, bounded by a deadline
            long deadline = System.nanoTime() + 30_000_000_000L;
            int status;
            while ((status = send("PUT", base + "0", null, "Content-Type", TEXT).statusCode()) == 409
                    && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals(201, status, "the root's path is free again");
            String metrics = send("GET", server.base() + "/metrics", null).body();
            assertTrue(metrics.contains("\niqstream_durable_streams_active 1\n"), metrics);
            assertEquals(204, send("DELETE", base + "0", null).statusCode());
            String after = send("GET", server.base() + "/metrics", null).body();
            assertTrue(after.contains("\niqstream_memory_used_bytes 0\n"), "every fork's charge given back: " + after);
        }
    }

    @Test
    void farDatesAndHugeTtlsNeitherFailNorExpireAtOnce() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            String base = server.base() + "/v1/stream/dates/";
            HttpResponse<String> far = send("PUT", base + "far", null, "Content-Type", TEXT,
                    "Stream-Expires-At", "+300000000-01-01T00:00:00Z");
            assertEquals(400, far.statusCode(), far.body());
            assertTrue(far.body().contains("Stream-Expires-At"), far.body());
            assertEquals(201, send("PUT", base + "ttl", "kept", "Content-Type", TEXT,
                    "Stream-TTL", "9223372036854775").statusCode());
            HttpResponse<String> read = send("GET", base + "ttl?offset=-1", null);
            assertEquals(200, read.statusCode(), "a huge TTL never ends: " + read.body());
            assertEquals("kept", read.body());
            assertEquals(201, send("PUT", base + "late", "kept", "Content-Type", TEXT,
                    "Stream-Expires-At", "9999-12-31T23:59:59Z").statusCode());
            assertEquals(200, send("GET", base + "late?offset=-1", null).statusCode());
        }
    }

    @Test
    void aThousandOtherProducersNeverPushOutAProducersEpochFence() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            String url = server.base() + "/v1/stream/producers/one";
            assertEquals(201, send("PUT", url, null, "Content-Type", TEXT).statusCode());
            assertEquals(200, producerAppend(url, "victim", 1, 0, "v0").statusCode());
            for (int i = 1; i < ProducerLedger.MAX_PRODUCERS; i++) {
                assertEquals(200, producerAppend(url, "other" + i, 0, 0, "o").statusCode());
            }
            HttpResponse<String> more = producerAppend(url, "one-too-many", 0, 0, "o");
            assertEquals(429, more.statusCode(), more.body());
            HttpResponse<String> zombie = producerAppend(url, "victim", 0, 0, "zombie");
            assertEquals(403, zombie.statusCode(), "a stale epoch is still fenced off: " + zombie.body());
            assertEquals(204, producerAppend(url, "victim", 1, 0, "v0").statusCode(), "a retry is a duplicate");
            String body = send("GET", url + "?offset=-1", null).body();
            assertEquals(1, body.split("v0", -1).length - 1, "stored once");
            assertTrue(!body.contains("zombie"), body);
        }
    }

    private static HttpResponse<String> producerAppend(String url, String id, long epoch, long seq, String body)
            throws Exception {
        return send("POST", url, body, "Content-Type", TEXT, "Producer-Id", id, "Producer-Epoch",
                Long.toString(epoch), "Producer-Seq", Long.toString(seq));
    }
}
