package io.iqstream.server.cluster;

import static io.iqstream.server.testing.DurableHttp.bearer;
import static io.iqstream.server.testing.DurableHttp.readUntil;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.DurableHttp;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Durable streams found where they live after a membership change, with real nodes on real sockets: a stream stays
 * on the node that created it when a node joins (its path's rendezvous owner moves to the newcomer) or leaves (the
 * owner moves to a survivor), and every node serves it from there — catch-up and live reads (long-poll, SSE),
 * appends, HEAD, close, DELETE — while a PUT through the new owner is answered by the holder (idempotent, or 409)
 * and never makes a second stream. A stream whose holder is gone is lost with it: 404, and a PUT creates it anew,
 * once.
 */
class ClusterStreamLocationTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";
    private static final String TEXT = "text/plain";
    private final List<TestServer> nodes = new ArrayList<>();
    private final String token = Tokens.admin();
    /** The three nodes' ports (A, B, C), each node's --peers; and their members. */
    private int pa;
    private int pb;
    private int pc;
    private List<Member> two;
    private List<Member> three;

    @BeforeEach
    void ports() throws Exception {
        pa = Ports.free();
        pb = Ports.free();
        pc = Ports.free();
        two = List.of(member(pa), member(pb));
        three = List.of(member(pa), member(pb), member(pc));
    }

    @AfterEach
    void stop() {
        for (TestServer s : nodes) {
            s.close();
        }
    }

    /** Starts the node at {@code port} of the cluster of A, B and C (some of them may not be running). */
    private TestServer node(int port) {
        String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb + ",127.0.0.1:" + pc;
        TestServer s = TestServer.start("--port", String.valueOf(port), "--peers", peers, "--advertise",
                "127.0.0.1:" + port, "--cluster-secret", SECRET, "--durable-streams-long-poll", "5s");
        nodes.add(s);
        return s;
    }

    private static Member member(int port) {
        return new Member("127.0.0.1", port);
    }

    /** Waits until every one of {@code nodes} has heard from all its peers and sees exactly {@code alive}. */
    private static void awaitView(Set<Member> alive, TestServer... nodes) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (TestServer s : nodes) {
            Membership m = s.server().context().cluster().membership();
            while (!m.settled() || !m.view().alive().equals(alive) || m.view().ready().size() != alive.size()) {
                assertTrue(System.nanoTime() < deadline, "the view " + m.view() + " did not become " + alive);
                Thread.sleep(50); // polling a condition, bounded by the deadline above
            }
        }
    }

    /** A stream name (after /v1/stream/) whose rendezvous owner over each of {@code views} is the member given. */
    private static String pathOwned(String prefix, List<List<Member>> views, List<Member> owners) {
        for (int n = 0; n < 5000; n++) {
            String path = prefix + "-" + n;
            boolean all = true;
            for (int i = 0; i < views.size() && all; i++) {
                all = Rendezvous.owner("/v1/stream/" + path, views.get(i)).equals(owners.get(i));
            }
            if (all) {
                return path;
            }
        }
        throw new AssertionError("no path of 5000 has the owners " + owners);
    }

    private static int held(TestServer s) {
        return s.server().context().durableStreams().size();
    }

    private static HttpResponse<String> longPoll(String url) {
        try {
            return send("GET", url, null, bearer(Tokens.admin()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A and B run, C (in their --peers) not yet: a stream is created on A, its path's owner over {A, B}; then C
     * starts and becomes its owner over {A, B, C}. Every request, through every node, is served by A.
     */
    @Test
    void aStreamCreatedBeforeANodeJoinedIsServedFromItsHolderThroughEveryNode() throws Exception {
        TestServer a = node(pa);
        TestServer b = node(pb);
        awaitView(Set.copyOf(two), a, b);
        String path = pathOwned("joined", List.of(two, three), List.of(member(pa), member(pc)));
        assertEquals(201, send("PUT", b.base() + "/v1/stream/" + path, "one ", bearer(token, "Content-Type", TEXT))
                .statusCode());
        assertEquals(1, held(a), "created on its owner over {A, B}: A");

        TestServer c = node(pc);
        awaitView(Set.copyOf(three), a, b, c);
        List<TestServer> all = List.of(a, b, c);

        // HEAD and a catch-up read through every node: A's stream, not C's 404
        for (TestServer via : all) {
            String url = via.base() + "/v1/stream/" + path;
            HttpResponse<String> head = send("HEAD", url, null, bearer(token));
            assertEquals(200, head.statusCode(), "HEAD through " + via.port());
            HttpResponse<String> read = send("GET", url + "?offset=-1", null, bearer(token));
            assertEquals(200, read.statusCode(), "GET through " + via.port());
            assertEquals("one ", read.body(), "GET through " + via.port());
            assertEquals(head.headers().firstValue("Stream-Next-Offset"),
                    read.headers().firstValue("Stream-Next-Offset"));
        }

        // a long-poll at the tail through each node is answered by an append through the next
        StringBuilder expected = new StringBuilder("one ");
        for (int i = 0; i < all.size(); i++) {
            String readUrl = all.get(i).base() + "/v1/stream/" + path;
            String tail = send("HEAD", readUrl, null, bearer(token)).headers().firstValue("Stream-Next-Offset")
                    .orElseThrow();
            CompletableFuture<HttpResponse<String>> poll = CompletableFuture.supplyAsync(
                    () -> longPoll(readUrl + "?offset=" + tail + "&live=long-poll"));
            Thread.sleep(300); // let the long-poll reach the tail first; it is answered either way
            String word = "w" + i + " ";
            TestServer writer = all.get((i + 1) % all.size());
            assertEquals(204, send("POST", writer.base() + "/v1/stream/" + path, word,
                    bearer(token, "Content-Type", TEXT)).statusCode(), "append through " + writer.port());
            HttpResponse<String> polled = poll.get(20, TimeUnit.SECONDS);
            assertEquals(200, polled.statusCode(), "long-poll through " + all.get(i).port());
            assertEquals(word, polled.body(), "long-poll through " + all.get(i).port());
            expected.append(word);
        }

        // SSE reads through every node see an append through C and the closure through B
        List<Iterator<String>> readers = new ArrayList<>();
        List<StringBuilder> data = new ArrayList<>();
        for (TestServer via : all) {
            HttpResponse<Stream<String>> sse = DurableHttp.lines(via.base() + "/v1/stream/" + path
                    + "?offset=-1&live=sse", bearer(token));
            assertEquals(200, sse.statusCode(), "SSE through " + via.port());
            Iterator<String> lines = sse.body().iterator();
            StringBuilder seen = new StringBuilder();
            assertTrue(readUntil(lines, "upToDate", seen), "SSE through " + via.port() + " caught up");
            readers.add(lines);
            data.add(seen);
        }
        assertEquals(204, send("POST", c.base() + "/v1/stream/" + path, "live ",
                bearer(token, "Content-Type", TEXT)).statusCode());
        assertEquals(204, send("POST", b.base() + "/v1/stream/" + path, "end",
                bearer(token, "Content-Type", TEXT, "Stream-Closed", "true")).statusCode());
        expected.append("live end");
        for (int i = 0; i < all.size(); i++) {
            assertTrue(readUntil(readers.get(i), "streamClosed", data.get(i)),
                    "SSE through " + all.get(i).port() + " saw the closure");
            assertEquals(expected.toString(), data.get(i).toString().replace("data:", "").trim(),
                    "SSE through " + all.get(i).port());
        }
        assertEquals(0, held(b) + held(c), "no copy on B or C");

        // DELETE through the new owner deletes A's stream: gone through every node
        assertEquals(204, send("DELETE", c.base() + "/v1/stream/" + path, null, bearer(token)).statusCode());
        assertEquals(0, held(a), "deleted on A, its holder");
        for (TestServer via : all) {
            assertEquals(404, send("HEAD", via.base() + "/v1/stream/" + path, null, bearer(token)).statusCode(),
                    "HEAD through " + via.port() + " after the DELETE");
        }
    }

    /** As above, for a PUT through the new owner: answered by the holder, never a second stream. */
    @Test
    void aPutThroughTheNewOwnerIsAnsweredByTheHolderAndMakesNoSecondStream() throws Exception {
        TestServer a = node(pa);
        TestServer b = node(pb);
        awaitView(Set.copyOf(two), a, b);
        String path = pathOwned("put", List.of(two, three), List.of(member(pb), member(pc)));
        assertEquals(201, send("PUT", a.base() + "/v1/stream/" + path, "kept ",
                bearer(token, "Content-Type", TEXT)).statusCode());
        assertEquals(1, held(b), "created on its owner over {A, B}: B");

        TestServer c = node(pc);
        awaitView(Set.copyOf(three), a, b, c);
        String viaC = c.base() + "/v1/stream/" + path;
        HttpResponse<String> again = send("PUT", viaC, null, bearer(token, "Content-Type", TEXT));
        assertEquals(200, again.statusCode(), "the same configuration: idempotent, answered by B");
        assertEquals("text/plain", again.headers().firstValue("Content-Type").orElse(""));
        HttpResponse<String> other = send("PUT", viaC, null, bearer(token, "Content-Type", "application/json"));
        assertEquals(409, other.statusCode(), "another configuration: the protocol's 409, from B");
        assertEquals(0, held(c), "C, the path's new owner, made no second stream");
        assertEquals(0, held(a));
        assertEquals(204, send("POST", viaC, "more", bearer(token, "Content-Type", TEXT)).statusCode());
        assertEquals("kept more", send("GET", a.base() + "/v1/stream/" + path + "?offset=-1", null, bearer(token))
                .body(), "one stream, B's, through A");
    }

    /**
     * A node joins, then another leaves: a stream held by a survivor that is not its path's owner any more (created
     * before the join) is still found there; a stream held by the node that left is lost with it — 404 through
     * every node, and a PUT creates it anew once (at its owner over the survivors), answered as existing through the
     * other. (A leave alone moves no survivor's stream: the rendezvous owner over fewer members changes only for
     * the paths the leaving node owned.)
     */
    @Test
    void whenItsHolderLeavesAStreamIs404AndIsCreatedAnewOnceWhileTheOthersAreFoundWhereTheyLive() throws Exception {
        List<Member> survivors = List.of(member(pb), member(pc));
        TestServer a = node(pa);
        TestServer b = node(pb);
        awaitView(Set.copyOf(two), a, b);
        String kept = pathOwned("kept", List.of(two, three), List.of(member(pb), member(pc)));
        String lost = pathOwned("lost", List.of(two), List.of(member(pa)));
        assertEquals(201, send("PUT", a.base() + "/v1/stream/" + kept, "here ",
                bearer(token, "Content-Type", TEXT)).statusCode());
        assertEquals(201, send("PUT", b.base() + "/v1/stream/" + lost, "gone",
                bearer(token, "Content-Type", TEXT)).statusCode());
        assertEquals(1, held(a), "the lost one on A");
        assertEquals(1, held(b), "the kept one on B");
        TestServer c = node(pc);
        awaitView(Set.copyOf(three), a, b, c);

        nodes.remove(a);
        a.close();
        awaitView(Set.copyOf(survivors), b, c);

        // the survivor's stream, through the node that now owns its path
        String keptViaC = c.base() + "/v1/stream/" + kept;
        assertEquals(200, send("HEAD", keptViaC, null, bearer(token)).statusCode(), "B's stream through C");
        assertEquals(204, send("POST", keptViaC, "still", bearer(token, "Content-Type", TEXT)).statusCode());
        assertEquals("here still", send("GET", b.base() + "/v1/stream/" + kept + "?offset=-1", null, bearer(token))
                .body());
        assertEquals(0, held(c), "no copy on C");

        // the lost one: 404 through both, then created once, at its owner over {B, C}
        for (TestServer via : List.of(b, c)) {
            assertEquals(404, send("GET", via.base() + "/v1/stream/" + lost + "?offset=-1", null, bearer(token))
                    .statusCode(), "a stream lost with its node, through " + via.port());
        }
        TestServer owner = Rendezvous.owner("/v1/stream/" + lost, survivors).equals(member(pb)) ? b : c;
        TestServer other = owner == b ? c : b;
        int before = held(owner);
        assertEquals(201, send("PUT", other.base() + "/v1/stream/" + lost, null,
                bearer(token, "Content-Type", TEXT)).statusCode(), "created anew, empty");
        assertEquals(200, send("PUT", owner.base() + "/v1/stream/" + lost, null,
                bearer(token, "Content-Type", TEXT)).statusCode(), "one stream: it exists");
        assertEquals(before + 1, held(owner), "the new one at its owner over {B, C}");
        assertEquals(2, held(b) + held(c), "the kept one and the new one, nothing twice");
    }
}
