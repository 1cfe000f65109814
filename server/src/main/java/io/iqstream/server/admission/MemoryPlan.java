package io.iqstream.server.admission;

import io.netty.util.internal.PlatformDependent;

/**
 * How the memory budget for event logs is derived when {@code --memory-budget} is not given: a share of the
 * direct memory the JVM may use (the launcher sizes that from the container's limit).
 */
public record MemoryPlan(long directMemoryBytes, long budgetBytes) {
    /** The share of direct memory given to event logs; the rest serves socket buffers and the pool's slack. */
    public static final double LOG_SHARE = 0.7;

    public static MemoryPlan detect() {
        long direct = PlatformDependent.maxDirectMemory();
        return new MemoryPlan(direct, (long) (direct * LOG_SHARE));
    }
}
