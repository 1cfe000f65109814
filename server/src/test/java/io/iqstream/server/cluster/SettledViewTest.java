package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.testing.TwoNodes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A node that says it has heard from every peer ({@link Membership#settled}) has the view it heard: a request read
 * between the two must not find the node settled under the view of a node alone that it starts with, which places
 * every path no peer was asked about here (a stream held elsewhere answered 404 through a node just restarted, once
 * in a rolling restart on a busy machine). A fresh membership of two real nodes, watched by a thread that reads
 * nothing else, many times over: the first time it reads settled, the view it reads next has both members.
 */
class SettledViewTest {
    private static final int ROUNDS = 40;

    @Test
    void aSettledNodeHasTheViewItSettledOn() throws Exception {
        try (TwoNodes nodes = TwoNodes.start()) {
            Member self = new Member("127.0.0.1", nodes.a().port());
            List<String> peers = List.of("127.0.0.1:" + nodes.a().port(), "127.0.0.1:" + nodes.b().port());
            List<String> seen = new ArrayList<>();
            for (int round = 0; round < ROUNDS; round++) {
                try (Membership m = new Membership(self, peers, new PeerAuth(TwoNodes.SECRET, self),
                        new ClusterMetrics())) {
                    m.start();
                    long deadline = System.nanoTime() + 30_000_000_000L;
                    while (!m.settled()) {
                        assertTrue(System.nanoTime() < deadline, "settled within 30 s");
                        Thread.onSpinWait(); // as close behind the prober as a reader can be
                    }
                    seen.add(m.view().alive().size() + "/" + m.view().ready().size());
                }
            }
            // both members alive (ready may lag on a busy machine: a /readyz answered 503 is alive, not ready)
            assertTrue(seen.stream().allMatch(v -> v.startsWith("2/")),
                    "alive/ready members in the view read once settled, per round: " + seen);
        }
    }
}
