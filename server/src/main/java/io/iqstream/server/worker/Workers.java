package io.iqstream.server.worker;

import io.netty.channel.EventLoop;
import java.util.List;

/**
 * The fixed set of workers and the run id → worker mapping. Immutable after start; any thread.
 *
 * <p>The mapping is a hash of the id modulo the worker count: stable for the life of the process, spreads runs
 * evenly, and needs no shared table. Across nodes, a load balancer hashing the same id plays this role.
 */
public final class Workers {
    private final Worker[] workers;

    public Workers(List<Worker> workers) {
        this.workers = workers.toArray(new Worker[0]);
    }

    public int size() {
        return workers.length;
    }

    public Worker get(int index) {
        return workers[index];
    }

    /** The worker owning {@code runId}. */
    public Worker ownerOf(String runId) {
        return workers[indexOf(runId, workers.length)];
    }

    /** The index of the worker owning {@code runId} among {@code workerCount} (the hash {@link #ownerOf} uses). */
    public static int indexOf(String runId, int workerCount) {
        int h = runId.hashCode();
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        return Math.floorMod(h, workerCount);
    }

    /** The worker whose loop is {@code loop}, or null. */
    public Worker of(EventLoop loop) {
        for (Worker w : workers) {
            if (w.loop() == loop) {
                return w;
            }
        }
        return null;
    }
}
