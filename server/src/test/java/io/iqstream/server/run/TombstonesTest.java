package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryBudget;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** Tombstones are charged to the budget, bounded by their share of it, and every early eviction is counted. */
class TombstonesTest {
    private static final long MINUTE_MS = 60_000;

    @Test
    void eachTombstoneIsChargedAndGivenBackWhenItExpires() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        LongAdder evicted = new LongAdder();
        Tombstones t = new Tombstones(MINUTE_MS, budget, evicted);
        t.add("run-1", 0);
        t.add("run-2", 0);
        assertEquals(Tombstones.bytesFor("run-1") * 2, budget.committedBytes());
        assertEquals(budget.committedBytes(), budget.tombstoneBytes());
        assertTrue(t.contains("run-1", 1));
        t.remove("run-1");
        assertEquals(Tombstones.bytesFor("run-2"), budget.committedBytes(), "a reused id gives its bytes back");
        long later = MINUTE_MS * 1_000_000L + 1;
        assertFalse(t.contains("run-2", later));
        assertEquals(0, budget.committedBytes(), "expired: given back");
        assertEquals(0, evicted.sum());
    }

    @Test
    void churnPastTheShareForgetsTheOldestAndCountsIt() {
        long budgetBytes = 1 << 20;
        MemoryBudget budget = new MemoryBudget(budgetBytes);
        LongAdder evicted = new LongAdder();
        Tombstones t = new Tombstones(MINUTE_MS, budget, evicted);
        int n = 50_000; // far more than a sixteenth of 1 MiB holds (~7,800)
        for (int i = 0; i < n; i++) {
            t.add("churn-" + i, i);
        }
        assertTrue(budget.tombstoneBytes() <= budgetBytes / MemoryBudget.TOMBSTONE_SHARE_DIVISOR,
                "within the share: " + budget.tombstoneBytes());
        assertEquals(n, t.size() + evicted.sum(), "every id is either remembered or counted as evicted");
        assertTrue(evicted.sum() > 0);
        assertTrue(t.contains("churn-" + (n - 1), n), "the newest are kept");
        assertFalse(t.contains("churn-0", n), "the oldest were forgotten");
        t.clear();
        assertEquals(0, budget.committedBytes());
    }

    @Test
    void aFullBudgetDoesNotBreakTheDrop() {
        MemoryBudget budget = new MemoryBudget(64 * 1024);
        assertTrue(budget.charge(64 * 1024, 0), "runs fill the budget");
        LongAdder evicted = new LongAdder();
        Tombstones t = new Tombstones(MINUTE_MS, budget, evicted);
        t.add("late", 0);
        assertFalse(t.contains("late", 1), "nothing to charge: not remembered");
        assertEquals(1, evicted.sum(), "and counted");
        assertEquals(64 * 1024, budget.committedBytes());
    }
}
