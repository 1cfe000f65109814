package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The plan covers connections at their worst with the memory outside the budget; the docs quote these figures. They
 * are the formula applied to the per-connection constants, not measurements: {@link MemoryFootprintTest} measures
 * what a connection really holds and fails when it is more than the constants.
 */
class MemoryPlanTest {
    private static final long MIB = 1L << 20;

    @Test
    void coversConnectionsAtTheirWorstOutsideTheBudget() {
        MemoryPlan container = MemoryPlan.forLimit(2048 * MIB, "test", 0);
        MemoryPlan small = MemoryPlan.forLimit(2048 * MIB, "test", 16 * MIB);
        System.out.printf("2 GiB container: heap %d MiB, direct %d MiB, budget %d MiB, covers %d connections;"
                + " --memory-budget 16m: heap %d MiB, direct %d MiB, covers %d%n", container.heapBytes() / MIB,
                container.directBytes() / MIB, container.budgetBytes() / MIB, container.connectionsCovered(),
                small.heapBytes() / MIB, small.directBytes() / MIB, small.connectionsCovered());
        for (MemoryPlan p : new MemoryPlan[] {container, small}) {
            long n = p.connectionsCovered();
            assertTrue(n > 0);
            assertTrue(n * MemoryPlan.CONNECTION_DIRECT_BYTES <= p.directBytes() - p.budgetBytes());
            assertTrue(n * MemoryPlan.CONNECTION_HEAP_BYTES <= p.heapBytes() / 2);
        }
        assertEquals(3744, container.connectionsCovered());
        assertEquals(248, small.connectionsCovered());
        assertEquals(0, MemoryPlan.connectionsCovered(64 * MIB, 16 * MIB, 32 * MIB), "no direct memory left");
    }
}
