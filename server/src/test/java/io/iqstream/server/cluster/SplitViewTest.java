package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.MachineFact;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Views that do not split runs (issue 34), with real nodes on real sockets: a run held by a node that is not its
 * owner in another node's view (it was placed while the views disagreed) is found there by every node — read
 * whole, continued by its publisher there, never created a second time; and a peer whose connections time out (a
 * stalled or starved node: its listen queue full, SYNs unanswered) is suspected and kept, not dropped at its first
 * timeout, until it has been silent for the whole window.
 */
class SplitViewTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";

    private static TestServer node(int port, String peers) {
        return TestServer.start("--port", String.valueOf(port), "--peers", peers, "--advertise", "127.0.0.1:" + port,
                "--cluster-secret", SECRET, "--await-run", "3s");
    }

    private static void awaitReady(int members, TestServer... nodes) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (TestServer s : nodes) {
            while (s.server().context().cluster().membership().view().ready().size() < members) {
                assertTrue(System.nanoTime() < deadline, "the nodes did not see each other within 30 s");
                Thread.sleep(50); // polling a condition, bounded by the deadline above
            }
        }
    }

    private static boolean holds(TestServer s, String runId) {
        var worker = s.server().context().workers().ownerOf(runId);
        return worker.loop().submit(() -> worker.registry().get(runId) != null).syncUninterruptibly().getNow();
    }

    @Test
    void aRunHeldByANodeThatIsNotItsOwnerInThisNodesViewIsFoundThereNeverCopied() throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
        try (TestServer a = node(pa, peers); TestServer b = node(pb, peers)) {
            awaitReady(2, a, b);
            Member memberA = a.server().context().cluster().membership().self();
            List<Member> ready = a.server().context().cluster().membership().view().ready();
            String run = null;
            for (int n = 0; run == null; n++) {
                if (Rendezvous.owner("split-" + n, ready).equals(memberA)) {
                    run = "split-" + n;
                }
            }
            String admin = Tokens.admin();
            // B creates it as a node whose view placed it on B would (a publish relayed to B by such a node)
            String target = "/v1/runs/" + run + "/events";
            Member memberB = b.server().context().cluster().membership().self();
            String peer = new PeerAuth(SECRET, new Member("127.0.0.9", 1))
                    .sign(memberB, "POST", target, System.currentTimeMillis()).header();
            HttpResponse<String> created = Http.post(b.base() + target, "application/x-ndjson",
                    "{\"type\":\"RUN_STARTED\"}\n{\"type\":\"X\",\"n\":1}\n", "Authorization", "Bearer " + admin,
                    PeerAuth.HEADER, peer, Forwarder.PLACED, "1");
            assertEquals(200, created.statusCode(), created.body());
            assertTrue(holds(b, run) && !holds(a, run), "B holds the run its hash gives to A");

            // a reader at A, the run's owner in A's view, gets it from B: not 404 after --await-run
            try (SseClient s = SseClient.open(a.port(), target, "Authorization: Bearer " + admin)) {
                List<SseClient.Event> events = s.take(2, 8000);
                assertEquals(2, events.size(), "the reader at A got the run held by B");
                assertEquals("{\"type\":\"X\",\"n\":1}", events.get(1).data());
            }
            // its publisher continues through A: appended at B, no second copy at A
            HttpResponse<String> more = Http.post(a.base() + target, "application/x-ndjson",
                    "{\"type\":\"RUN_FINISHED\"}\n", "Authorization", "Bearer " + admin, "Last-Event-ID", "2");
            assertEquals(200, more.statusCode(), more.body());
            assertTrue(more.body().contains("\"lastEventId\":3"), more.body());
            assertFalse(holds(a, run), "A never created a copy of the run");
            // a fresh publisher of the same id through A (Last-Event-ID 0) is told the run exists, not given a copy
            HttpResponse<String> again = Http.post(a.base() + target, "application/x-ndjson",
                    "{\"type\":\"RUN_STARTED\"}\n", "Authorization", "Bearer " + admin, "Last-Event-ID", "0");
            assertEquals(409, again.statusCode(), again.body());
            assertFalse(holds(a, run), "A never created a copy of the run");
        }
    }

    @Test
    void aPeerWhoseConnectionsTimeOutIsSuspectedAndKeptUntilSilentForTheWindow() throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
        try (TestServer a = node(pa, peers)) {
            Membership m = a.server().context().cluster().membership();
            try (TestServer b = node(pb, peers)) {
                awaitReady(2, a, b);
            }
            // B's port now takes no connection at all: a listen queue of one, filled, nobody accepting
            List<Socket> filling = new ArrayList<>();
            try (ServerSocket stalled = new ServerSocket()) {
                stalled.setReuseAddress(true);
                stalled.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), pb), 1);
                boolean timesOut = false;
                for (int i = 0; i < 16 && !timesOut; i++) {
                    Socket s = new Socket();
                    try {
                        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), pb), 300);
                        filling.add(s);
                    } catch (IOException e) {
                        s.close();
                        timesOut = true;
                    }
                }
                MachineFact.assume("listen_queue_drops", timesOut,
                        "this kernel answers connections beyond a full listen queue");
                long stalledAt = System.nanoTime();
                Member memberB = new Member("127.0.0.1", pb);
                boolean suspected = false;
                // inside the window (10 s; 6 s checked, room for a loaded machine) B stays a member
                while (System.nanoTime() - stalledAt < 6_000_000_000L) {
                    Membership.View v = m.view();
                    assertTrue(v.alive().contains(memberB) && v.ready().contains(memberB),
                            "a peer whose connects time out is kept within the window, not dropped: " + v);
                    suspected |= v.suspected().contains(memberB);
                    Thread.sleep(100); // polling a condition, bounded by the window
                }
                assertTrue(suspected, "the peer counts as suspected while it misses probes");
                long deadline = stalledAt + 40_000_000_000L;
                while (m.view().alive().contains(memberB)) {
                    assertTrue(System.nanoTime() < deadline, "a peer silent past the window is dropped");
                    Thread.sleep(100); // polling a condition, bounded by the deadline
                }
                assertTrue(System.nanoTime() - stalledAt >= Membership.DEAD_AFTER_MS * 1_000_000L,
                        "dropped only after the whole window");
            } finally {
                for (Socket s : filling) {
                    s.close();
                }
            }
        }
    }
}
