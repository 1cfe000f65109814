package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.iqstream.server.testing.TwoNodes;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two real nodes with --peers in one JVM: any node serves any run; the peer header is checked. */
class ClusterForwardingTest {
    static TwoNodes nodes;
    static TestServer a;
    static TestServer b;
    static String admin;

    @BeforeAll
    static void start() throws Exception {
        nodes = TwoNodes.start("--await-run", "5s");
        a = nodes.a();
        b = nodes.b();
        admin = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        if (nodes != null) {
            nodes.close();
        }
    }


    private static boolean holds(TestServer s, String runId) {
        return s.server().context().workers().ownerOf(runId).loop().submit(
                () -> s.server().context().workers().ownerOf(runId).registry().get(runId) != null).syncUninterruptibly()
                .getNow();
    }

    /**
     * Run ids for the test, four owned by each node by the rendezvous hash over the two members (the ports are
     * random, so a fixed list could land all on one node): the first ids "fw-0", "fw-1", ... the hash gives to
     * A and to B, alternating. Fails if the first 200 ids all go to one node (the hash does not spread).
     */
    private static List<String> runsSpreadOverBothNodes(int perNode) {
        Member memberA = a.server().context().cluster().membership().self();
        List<Member> members = a.server().context().cluster().membership().view().ready();
        List<String> onA = new ArrayList<>();
        List<String> onB = new ArrayList<>();
        for (int n = 0; n < 200 && (onA.size() < perNode || onB.size() < perNode); n++) {
            String run = "fw-" + n;
            (Rendezvous.owner(run, members).equals(memberA) ? onA : onB).add(run);
        }
        assertTrue(onA.size() >= perNode && onB.size() >= perNode,
                "the hash spreads ids over both members: " + onA.size() + " on A, " + onB.size() + " on B");
        List<String> runs = new ArrayList<>();
        for (int i = 0; i < perNode; i++) {
            runs.add(onA.get(i));
            runs.add(onB.get(i));
        }
        return runs;
    }

    @Test
    void anyNodeServesAnyRunWholeWithResume() throws Exception {
        List<String> runs = runsSpreadOverBothNodes(4);
        int onA = 0;
        for (int i = 0; i < runs.size(); i++) {
            String run = runs.get(i);
            boolean ownedByA = i % 2 == 0;
            // each node publishes to runs the other owns and to its own, and reads from the other node
            TestServer pub = i % 4 < 2 ? a : b;
            TestServer sub = pub == a ? b : a;
            HttpResponse<String> r = Http.publish(pub.base(), run, admin, "{\"type\":\"RUN_STARTED\"}",
                    "{\"type\":\"X\",\"n\":" + i + "}", "{\"type\":\"RUN_FINISHED\"}");
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(holds(a, run) ^ holds(b, run), run + " is held by exactly one node");
            assertEquals(ownedByA, holds(a, run), run + " is held by the node the rendezvous hash names");
            onA += holds(a, run) ? 1 : 0;
            try (SseClient s = SseClient.open(sub.port(), "/v1/runs/" + run + "/events",
                    "Authorization: Bearer " + admin, "Last-Event-ID: 1")) {
                List<SseClient.Event> events = s.take(2, 5000);
                assertEquals("2", events.get(0).id());
                assertEquals("{\"type\":\"X\",\"n\":" + i + "}", events.get(0).data());
                assertEquals("3", events.get(1).id());
            }
            HttpResponse<String> status = Http.get(sub.base() + "/v1/runs/" + run, "Authorization",
                    "Bearer " + admin);
            assertEquals(200, status.statusCode(), status.body());
        }
        assertEquals(4, onA, "runs are spread over both nodes: " + onA + " of 8 on A");
    }

    @Test
    void metricsCountRelayedRequestsByKindAndTheMembers() throws Exception {
        // a run held by one node, then each kind of request sent to the other one
        String run = "fw-metrics";
        assertEquals(200, Http.publish(a.base(), run, admin, "{\"type\":\"RUN_STARTED\"}").statusCode());
        TestServer other = holds(a, run) ? b : a;
        ClusterMetrics m = other.server().context().metrics().cluster;
        long status = m.forwardedCount(ClusterMetrics.Forward.STATUS);
        long publish = m.forwardedCount(ClusterMetrics.Forward.PUBLISH);
        long subscribe = m.forwardedCount(ClusterMetrics.Forward.SUBSCRIBE);
        long delete = m.forwardedCount(ClusterMetrics.Forward.DELETE);
        assertEquals(200, Http.get(other.base() + "/v1/runs/" + run, "Authorization", "Bearer " + admin)
                .statusCode());
        assertEquals(200, Http.publish(other.base(), run, admin, "{\"type\":\"X\"}").statusCode());
        try (SseClient s = SseClient.open(other.port(), "/v1/runs/" + run + "/events",
                "Authorization: Bearer " + admin)) {
            assertEquals("2", s.take(2, 5000).get(1).id());
        }
        assertEquals(200, Http.delete(other.base() + "/v1/runs/" + run, "Authorization", "Bearer " + admin)
                .statusCode());
        assertEquals(status + 1, m.forwardedCount(ClusterMetrics.Forward.STATUS));
        assertEquals(publish + 1, m.forwardedCount(ClusterMetrics.Forward.PUBLISH));
        assertEquals(subscribe + 1, m.forwardedCount(ClusterMetrics.Forward.SUBSCRIBE));
        assertEquals(delete + 1, m.forwardedCount(ClusterMetrics.Forward.DELETE));
        String text = Http.get(other.base() + "/metrics").body();
        assertTrue(text.contains("iqstream_cluster_members{state=\"live\"} 2\n"), text);
        assertTrue(text.contains("iqstream_cluster_members{state=\"ready\"} 2\n"), text);
        assertTrue(text.contains("iqstream_cluster_forwarded_total{kind=\"publish\"} "), text);
        assertTrue(text.contains("iqstream_cluster_forward_failures_total{reason=\"connect\"} "), text);
        assertTrue(text.matches("(?s).*iqstream_cluster_peer_connections_open [1-9].*"), "pooled peer connections: "
                + text);
    }

    @Test
    void aValidPeerHeaderIsServedInPlaceAForgedOrReplayedOneIsRefusedNotRelayed() throws Exception {
        String run = "fw-peer";
        assertEquals(200, Http.publish(a.base(), run, admin, "{\"type\":\"RUN_STARTED\"}").statusCode());
        TestServer holder = holds(a, run) ? a : b;
        TestServer other = holder == a ? b : a;
        String target = "/v1/runs/" + run;
        Member self = other.server().context().cluster().membership().self();
        String forged = "1;" + holder.server().context().cluster().membership().self().key() + ";"
                + System.currentTimeMillis() + ";0011-1;" + "00".repeat(32);
        HttpResponse<String> viaForged = Http.get(other.base() + target, "Authorization", "Bearer " + admin,
                PeerAuth.HEADER, forged);
        assertEquals(403, viaForged.statusCode(), "a forged header is refused, never relayed (no loop)");
        assertTrue(viaForged.body().contains("\"error\":\"peer_unproven\""), viaForged.body());
        PeerAuth sender = new PeerAuth(TwoNodes.SECRET, new Member("127.0.0.9", 1));
        String valid = sender.sign(self, "GET", target, System.currentTimeMillis()).header();
        HttpResponse<String> viaPeer = Http.get(other.base() + target, "Authorization", "Bearer " + admin,
                PeerAuth.HEADER, valid);
        assertEquals(404, viaPeer.statusCode(), "a relayed request is never relayed again");
        assertTrue(viaPeer.headers().firstValue(PeerAuth.PROOF).isPresent(), "the answer proves the secret");
        HttpResponse<String> replayed = Http.get(other.base() + target, "Authorization", "Bearer " + admin,
                PeerAuth.HEADER, valid);
        assertEquals(403, replayed.statusCode(), "each peer header is good once");
    }
}
