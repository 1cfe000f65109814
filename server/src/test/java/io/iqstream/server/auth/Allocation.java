package io.iqstream.server.auth;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import io.iqstream.server.testing.MachineFact;

/** Measures bytes allocated by the current thread, via the JDK's com.sun.management extension. */
final class Allocation {

    private Allocation() {
    }

    /** Runs {@code work} three times to warm up, then asserts a measured run allocates (almost) nothing. */
    static void assertNoAllocation(Runnable work) {
        if (!(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean bean)
                || !bean.isThreadAllocatedMemorySupported() || !bean.isThreadAllocatedMemoryEnabled()) {
            MachineFact.assume("thread_allocation", false, "thread allocation counting is not available");
            return;
        }
        long thread = Thread.currentThread().threadId();
        for (int i = 0; i < 3; i++) {
            work.run();
        }
        // The least of three measured runs: an allocation on the measured path shows in every run (thousands
        // of calls each), while a one-off (a late JIT recompilation, a lazily made constant) shows in one only.
        long allocated = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long before = bean.getThreadAllocatedBytes(thread);
            work.run();
            allocated = Math.min(allocated, bean.getThreadAllocatedBytes(thread) - before);
        }
        // The counter calls themselves may allocate a little; the work is thousands of calls.
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes");
    }
}
