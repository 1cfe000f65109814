package io.iqstream.server.cluster;

import static io.iqstream.server.testing.DurableHttp.bearer;
import static io.iqstream.server.testing.DurableHttp.readUntil;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.DurableHttp;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.iqstream.server.testing.TwoNodes;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Durable streams on two real nodes with --peers: a stream lives on its path's rendezvous owner, and a request for
 * it on the other node is served there by forwarding — writes, catch-up, long-poll and SSE reads alike, with the
 * client's token checked on the owner.
 */
class ClusterDurableStreamsTest {
    static TwoNodes nodes;
    static TestServer a;
    static TestServer b;
    static String token;

    @BeforeAll
    static void start() throws Exception {
        nodes = TwoNodes.start("--durable-streams-long-poll", "5s");
        a = nodes.a();
        b = nodes.b();
        token = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }

    /** A stream path (after /v1/stream/) the rendezvous hash gives to {@code owner}. */
    private static String pathOwnedBy(TestServer owner, String prefix) {
        Member self = owner.server().context().cluster().membership().self();
        List<Member> members = owner.server().context().cluster().membership().view().forNewRuns();
        for (int n = 0; n < 200; n++) {
            String path = prefix + "-" + n;
            if (Rendezvous.owner("/v1/stream/" + path, members).equals(self)) {
                return path;
            }
        }
        throw new AssertionError("no path of 200 hashed to " + self);
    }

    private static int streamsHeld(TestServer s) {
        return s.server().context().durableStreams().size();
    }

    @Test
    void everyRequestIsServedOnEitherNode() throws Exception {
        String path = pathOwnedBy(b, "on-b");
        int heldOnA = streamsHeld(a);
        int heldOnB = streamsHeld(b);
        String viaA = a.base() + "/v1/stream/" + path;
        String viaB = b.base() + "/v1/stream/" + path;
        assertEquals(201, send("PUT", viaA, "one ", bearer(token, "Content-Type", "text/plain")).statusCode());
        assertEquals(heldOnB + 1, streamsHeld(b), "created on its owner, B");
        assertEquals(heldOnA, streamsHeld(a), "not on A, where the request came in");
        assertEquals(204, send("POST", viaB, "two ", bearer(token, "Content-Type", "text/plain")).statusCode());
        HttpResponse<String> head = send("HEAD", viaA, null, bearer(token));
        assertEquals(200, head.statusCode());
        String tail = head.headers().firstValue("Stream-Next-Offset").orElseThrow();
        assertEquals("one two ", send("GET", viaA + "?offset=-1", null, bearer(token)).body());

        // a long-poll on A at the tail is answered by an append on B
        CompletableFuture<HttpResponse<String>> poll = CompletableFuture.supplyAsync(() -> {
            try {
                return send("GET", viaA + "?offset=" + tail + "&live=long-poll", null, bearer(token));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(300); // let the long-poll reach the tail first; it is answered either way
        assertEquals(204, send("POST", viaB, "three", bearer(token, "Content-Type", "text/plain")).statusCode());
        HttpResponse<String> polled = poll.get(20, TimeUnit.SECONDS);
        assertEquals(200, polled.statusCode());
        assertEquals("three", polled.body());

        // an SSE read on A sees appends made on B, then the closure
        HttpResponse<Stream<String>> sse = DurableHttp.lines(viaA + "?offset=-1&live=sse", bearer(token));
        assertEquals(200, sse.statusCode());
        assertEquals("text/event-stream", sse.headers().firstValue("Content-Type").orElse(""));
        Iterator<String> lines = sse.body().iterator();
        StringBuilder data = new StringBuilder();
        assertTrue(readUntil(lines, "upToDate", data), "caught up");
        assertEquals(204, send("POST", viaB, " four", bearer(token, "Content-Type", "text/plain",
                "Stream-Closed", "true")).statusCode());
        assertTrue(readUntil(lines, "streamClosed", data), "closed seen");
        assertEquals("one two three four", data.toString().replace("data:", "").trim());

        // the token is checked on the owner: none is 401 through A
        assertEquals(401, send("GET", viaA + "?offset=-1", null).statusCode());
        assertEquals(204, send("DELETE", viaA, null, bearer(token)).statusCode());
        assertEquals(404, send("HEAD", viaB, null, bearer(token)).statusCode());
    }

    /**
     * A fork reads its source's bytes in place, so it is made on the node that holds its source, whatever node its
     * own path hashes to, and found there through every node.
     */
    @Test
    void aForkIsMadeWhereItsSourceLivesAndServedThroughEitherNode() throws Exception {
        String source = pathOwnedBy(a, "source");
        String fork = pathOwnedBy(b, "fork");
        int heldOnA = streamsHeld(a);
        int heldOnB = streamsHeld(b);
        assertEquals(201, send("PUT", b.base() + "/v1/stream/" + source, "shared ",
                bearer(token, "Content-Type", "text/plain")).statusCode());
        HttpResponse<String> made = send("PUT", b.base() + "/v1/stream/" + fork, null, bearer(token,
                "Content-Type", "text/plain", "Stream-Forked-From", "/v1/stream/" + source));
        assertEquals(201, made.statusCode(), "forked through B, its path's owner: " + made.body());
        assertEquals(heldOnA + 2, streamsHeld(a), "the fork is on A, beside its source");
        assertEquals(heldOnB, streamsHeld(b), "nothing on B");
        assertEquals(204, send("POST", b.base() + "/v1/stream/" + fork, "own", bearer(token, "Content-Type",
                "text/plain")).statusCode());
        assertEquals(200, send("PUT", a.base() + "/v1/stream/" + fork, null, bearer(token, "Content-Type",
                "text/plain", "Stream-Forked-From", "/v1/stream/" + source)).statusCode(), "the same fork again");
        for (TestServer via : List.of(a, b)) {
            HttpResponse<String> read = send("GET", via.base() + "/v1/stream/" + fork + "?offset=-1", null,
                    bearer(token));
            assertEquals(200, read.statusCode());
            assertEquals("shared own", read.body(), "the fork through " + via.port());
        }
        assertEquals(204, send("DELETE", b.base() + "/v1/stream/" + fork, null, bearer(token)).statusCode());
        assertEquals(204, send("DELETE", b.base() + "/v1/stream/" + source, null, bearer(token)).statusCode());
        assertEquals(heldOnA, streamsHeld(a), "both freed on A");
    }

    @Test
    void aForkOfASourceItsCallerMayNotReadIs404ThroughEitherNode() throws Exception {
        String source = pathOwnedBy(a, "secret");
        assertEquals(201, send("PUT", a.base() + "/v1/stream/" + source, "the owner's secret",
                bearer(token, "Content-Type", "text/plain")).statusCode());
        String attacker = new TokenMinter(TestServer.SECRET).mint(List.of("att/*"), List.of("att/*"),
                Duration.ofHours(1));
        int heldOnA = streamsHeld(a);
        int heldOnB = streamsHeld(b);
        for (TestServer via : List.of(a, b)) {
            for (String fork : List.of(pathOwnedBy(a, "att/copy"), pathOwnedBy(b, "att/copy"))) {
                HttpResponse<String> r = send("PUT", via.base() + "/v1/stream/" + fork, null,
                        bearer(attacker, "Stream-Forked-From", "/v1/stream/" + source));
                assertEquals(404, r.statusCode(), "fork " + fork + " through " + via.port() + ": " + r.body());
                assertEquals(404, send("GET", via.base() + "/v1/stream/" + fork + "?offset=-1", null,
                        bearer(attacker)).statusCode());
            }
        }
        assertEquals(heldOnA, streamsHeld(a), "nothing made on A");
        assertEquals(heldOnB, streamsHeld(b), "nothing made on B");
        assertEquals(204, send("DELETE", a.base() + "/v1/stream/" + source, null, bearer(token)).statusCode());
    }
}
