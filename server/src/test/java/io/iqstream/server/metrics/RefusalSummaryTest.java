package io.iqstream.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class RefusalSummaryTest {
    @Test
    void summarisesOnlyWhatWasRefusedSinceTheLastCall() {
        Metrics m = new Metrics();
        RefusalSummary s = new RefusalSummary(m);
        assertNull(s.summarise());
        m.refused(Refusal.OVER_BUDGET);
        m.refused(Refusal.OVER_BUDGET);
        m.refused(Refusal.UNAUTHENTICATED);
        assertEquals("unauthenticated=1, over_budget=2", s.summarise());
        assertNull(s.summarise());
    }
}
