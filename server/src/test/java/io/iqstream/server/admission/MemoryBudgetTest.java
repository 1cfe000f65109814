package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MemoryBudgetTest {
    @Test
    void admitsRunsWhileTheExpectedSizeFits() {
        MemoryBudget b = new MemoryBudget(3 * MemoryBudget.INITIAL_EXPECTED_RUN_BYTES);
        assertTrue(b.tryAdmitRun() > 0);
        assertTrue(b.tryAdmitRun() > 0);
        assertTrue(b.tryAdmitRun() > 0);
        assertTrue(b.isFull());
        assertEquals(-1, b.tryAdmitRun());
        assertEquals(1, b.runsRefused());
        b.release(MemoryBudget.INITIAL_EXPECTED_RUN_BYTES);
        assertTrue(b.tryAdmitRun() > 0);
    }

    @Test
    void runsInFlightMayGrowIntoTheHeadroomButOversizedOnesMayNot() {
        long budget = 1 << 20;
        MemoryBudget b = new MemoryBudget(budget);
        assertTrue(b.charge(budget, 1024));
        long ordinary = b.expectedRunBytes();
        assertTrue(b.charge(budget / 8, ordinary), "an ordinary run grows into the headroom");
        assertFalse(b.charge(1024, 10 * ordinary), "an oversized run is refused past the budget");
        assertFalse(b.charge(budget / 4, ordinary), "nothing passes the headroom");
    }

    @Test
    void learnsTheExpectedRunSizeFromEndedRuns() {
        MemoryBudget b = new MemoryBudget(1 << 30);
        for (int i = 0; i < 200; i++) {
            b.learnRunSize(70_000);
        }
        assertTrue(Math.abs(b.expectedRunBytes() - 70_000) < 2_000, "expected " + b.expectedRunBytes());
    }
}
