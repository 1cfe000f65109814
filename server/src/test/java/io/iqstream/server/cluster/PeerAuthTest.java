package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PeerAuthTest {
    private final PeerAuth auth = new PeerAuth("cluster-secret-0123456789abcdef0123456789");
    private final long now = 1_700_000_000_000L;

    @Test
    void acceptsItsOwnSignatureOfTheSameRequest() {
        String h = auth.sign("GET", "/v1/runs/r1/events?access_token=x", now);
        assertTrue(auth.verify(h, "GET", "/v1/runs/r1/events?access_token=x", now + 1000));
    }

    @Test
    void refusesAnotherRequestAnotherSecretStaleOrGarbage() {
        String h = auth.sign("GET", "/v1/runs/r1/events", now);
        assertFalse(auth.verify(h, "POST", "/v1/runs/r1/events", now), "method is signed");
        assertFalse(auth.verify(h, "GET", "/v1/runs/r2/events", now), "target is signed");
        assertFalse(auth.verify(h, "GET", "/v1/runs/r1/events", now + PeerAuth.MAX_SKEW_MS + 1), "stale");
        PeerAuth other = new PeerAuth("another-secret-0123456789abcdef012345678");
        assertFalse(other.verify(h, "GET", "/v1/runs/r1/events", now), "another cluster's secret");
        for (String bad : new String[] {null, "", "x", "123.", ".abcd", now + ".zz", now + ".00", "9".repeat(30) + ".00"}) {
            assertFalse(auth.verify(bad, "GET", "/v1/runs/r1/events", now), "garbage: " + bad);
        }
    }
}
