package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * A node that has not yet heard from every peer (one accepts connections but never answers: a stalled node) must
 * not create runs on its own guess — the run could be one another node owns. It answers 503 peer_unavailable
 * until the stalled peer counts as dead (six probes without an answer), then serves.
 */
class UnsettledMembershipTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";

    @Test
    void refusesNewRunsUntilEveryPeerAnsweredOrIsSurelyDead() throws Exception {
        // a peer whose listen backlog takes the connection and nobody ever reads it: every probe times out
        try (ServerSocket stalled = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                ServerSocket reserve = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = reserve.getLocalPort();
            reserve.close();
            String peers = "127.0.0.1:" + port + ",127.0.0.1:" + stalled.getLocalPort();
            try (TestServer a = TestServer.start("--port", String.valueOf(port), "--peers", peers, "--advertise",
                    "127.0.0.1:" + port, "--cluster-secret", SECRET)) {
                Membership m = a.server().context().cluster().membership();
                assertFalse(m.settled(), "the stalled peer has not answered yet");
                HttpResponse<String> early = Http.publish(a.base(), "early", Tokens.admin(),
                        "{\"type\":\"RUN_STARTED\"}");
                assertEquals(503, early.statusCode(), early.body());
                assertTrue(early.body().contains("peer_unavailable"), early.body());
                long deadline = System.nanoTime() + 40_000_000_000L;
                while (!m.settled()) {
                    assertTrue(System.nanoTime() < deadline, "settled within 40 s (the stalled peer is dead)");
                    Thread.sleep(100); // polling a condition, bounded by the deadline
                }
                assertEquals(1, m.view().alive().size(), "the stalled peer counts as dead");
                assertEquals(200, Http.publish(a.base(), "early", Tokens.admin(), "{\"type\":\"RUN_STARTED\"}")
                        .statusCode());
            }
        }
    }
}
