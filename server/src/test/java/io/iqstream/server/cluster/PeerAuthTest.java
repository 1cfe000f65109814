package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The peer header and its answer's proof: bound to both nodes, the request and the status; each header once. */
class PeerAuthTest {
    private static final String SECRET = "cluster-secret-0123456789abcdef0123456789";
    private static final Member A = new Member("10.0.0.1", 8080);
    private static final Member B = new Member("10.0.0.2", 8080);
    private static final Member C = new Member("10.0.0.3", 8080);
    private final PeerAuth a = new PeerAuth(SECRET, A);
    private final PeerAuth b = new PeerAuth(SECRET, B);
    private final long now = 1_700_000_000_000L;

    @Test
    void theReceiverVerifiesOnceAndItsProofConvincesTheSender() {
        PeerAuth.Signed s = a.sign(B, "GET", "/v1/runs/r1/events?access_token=x", now);
        PeerAuth.Incoming in = b.verify(s.header(), "GET", "/v1/runs/r1/events?access_token=x", now + 1000);
        assertNotNull(in);
        assertEquals(A.key(), in.from());
        assertNull(b.verify(s.header(), "GET", "/v1/runs/r1/events?access_token=x", now + 1000), "a replay");
        String proof = b.prove(in, 200);
        assertTrue(a.proves(s, 200, proof));
        assertFalse(a.proves(s, 404, proof), "the status is proven");
        assertFalse(a.proves(a.sign(B, "GET", "/x", now), 200, proof), "bound to its own request's nonce");
        assertFalse(a.proves(s, 200, null), "no proof");
        assertFalse(a.proves(s, 200, "00".repeat(32)), "a forged proof");
        assertFalse(a.proves(s, 200, new PeerAuth("another-secret-0123456789abcdef012345678", B).prove(in, 200)),
                "another secret");
    }

    @Test
    void aHeaderMadeForOneNodeDoesNotVerifyOnAnother() {
        PeerAuth c = new PeerAuth(SECRET, C);
        PeerAuth.Signed s = a.sign(B, "GET", "/v1/runs/r1", now);
        assertNull(c.verify(s.header(), "GET", "/v1/runs/r1", now));
        assertNotNull(b.verify(s.header(), "GET", "/v1/runs/r1", now));
    }

    @Test
    void refusesAnotherRequestAnotherSecretStaleAnotherHopCountOrGarbage() {
        PeerAuth.Signed s = a.sign(B, "GET", "/v1/runs/r1/events", now);
        assertNull(b.verify(s.header(), "POST", "/v1/runs/r1/events", now), "method is signed");
        assertNull(b.verify(s.header(), "GET", "/v1/runs/r2/events", now), "target is signed");
        assertNull(b.verify(s.header(), "GET", "/v1/runs/r1/events", now + PeerAuth.MAX_SKEW_MS + 1), "stale");
        assertNull(new PeerAuth("another-secret-0123456789abcdef012345678", B)
                .verify(s.header(), "GET", "/v1/runs/r1/events", now), "another cluster's secret");
        assertNull(b.verify("2" + s.header().substring(1), "GET", "/v1/runs/r1/events", now), "a second hop");
        for (String bad : new String[] {null, "", "x", "1;;;;", "1;a;1;n;zz", now + ".00", "1;" + A.key() + ";"
                + now + ";e-1;" + "00".repeat(32), "9".repeat(600)}) {
            assertNull(b.verify(bad, "GET", "/v1/runs/r1/events", now), "garbage: " + bad);
        }
        assertNotNull(b.verify(s.header(), "GET", "/v1/runs/r1/events", now), "the real one still verifies once");
    }

    @Test
    void theReplayWindowTakesEachNonceOnceOutOfOrderAndForgetsOnlyTheVeryOld() {
        ReplayWindow w = new ReplayWindow();
        assertTrue(w.take(5));
        assertTrue(w.take(3), "overtaken requests are fine");
        assertFalse(w.take(3));
        assertFalse(w.take(5));
        assertTrue(w.take(5 + ReplayWindow.SIZE));
        assertFalse(w.take(5), "too old to tell: refused");
        assertTrue(w.take(6), "just inside the window");
        assertFalse(w.take(0));
    }
}
