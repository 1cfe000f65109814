package io.iqstream.server.run;

import io.iqstream.server.admission.MemoryBudget;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Ids of runs whose retention has passed, remembered for {@code --tombstone} so a late reader gets 410 Gone rather
 * than 404 and a publisher cannot silently reuse the id. Confined to one worker loop.
 *
 * <p>Bounded by memory, not by a count: each tombstone is charged {@link #bytesFor} to the memory budget, and all
 * tombstones together may take at most a sixteenth of it ({@link MemoryBudget#tryChargeTombstone}). When the budget
 * refuses a new one, the oldest of this worker are forgotten first (at most {@value #MAX_EVICTIONS_PER_ADD} per
 * add; if that is not enough, the new one is not kept). Every tombstone forgotten before its time is counted in
 * {@code evicted} ({@code iqstream_tombstones_evicted_total}): such an id answers 404, and may be used again by a new
 * run.
 */
public final class Tombstones {
    /** Heap of one tombstone besides its id's characters: map entry, boxed expiry, String, table slot. */
    static final long ENTRY_OVERHEAD_BYTES = 128;
    private static final int MAX_EVICTIONS_PER_ADD = 4;

    private final LinkedHashMap<String, Long> expiryNanosById = new LinkedHashMap<>();
    private final long keepNanos;
    private final MemoryBudget budget;
    private final LongAdder evicted;
    private long heldBytes;

    /** Tombstones charged to {@code budget}; forgotten ones counted in {@code evicted}. */
    public Tombstones(long keepMs, MemoryBudget budget, LongAdder evicted) {
        this.keepNanos = keepMs * 1_000_000L;
        this.budget = budget;
        this.evicted = evicted;
    }

    /** Bytes charged for one tombstone of {@code runId}. */
    static long bytesFor(String runId) {
        return ENTRY_OVERHEAD_BYTES + runId.length();
    }

    public void add(String runId, long nowNanos) {
        if (keepNanos <= 0) {
            return;
        }
        purge(nowNanos);
        Long old = expiryNanosById.remove(runId);
        long cost = bytesFor(runId);
        if (old == null) {
            int evictions = 0;
            while (!budget.tryChargeTombstone(cost)) {
                if (evictions == MAX_EVICTIONS_PER_ADD || expiryNanosById.isEmpty()) {
                    evicted.increment(); // this one cannot be remembered
                    return;
                }
                forgetOldest();
                evictions++;
            }
            heldBytes += cost;
        }
        expiryNanosById.put(runId, nowNanos + keepNanos);
    }

    private void forgetOldest() {
        Iterator<String> it = expiryNanosById.keySet().iterator();
        String id = it.next();
        it.remove();
        free(id);
        evicted.increment();
    }

    private void free(String runId) {
        long cost = bytesFor(runId);
        heldBytes -= cost;
        budget.releaseTombstone(cost);
    }

    public boolean contains(String runId, long nowNanos) {
        purge(nowNanos);
        Long until = expiryNanosById.get(runId);
        return until != null && until - nowNanos > 0;
    }

    /** Removes a tombstone (the id is being used for a new run). */
    public void remove(String runId) {
        if (expiryNanosById.remove(runId) != null) {
            free(runId);
        }
    }

    public int size() {
        return expiryNanosById.size();
    }

    /** Bytes this worker's tombstones are charged. */
    public long heldBytes() {
        return heldBytes;
    }

    /** Forgets every tombstone and gives back their bytes (shutdown). */
    public void clear() {
        for (String id : expiryNanosById.keySet()) {
            free(id);
        }
        expiryNanosById.clear();
    }

    /** Forgets expired tombstones, oldest first, at most {@code limit}. */
    public void purge(long nowNanos, int limit) {
        Iterator<Map.Entry<String, Long>> it = expiryNanosById.entrySet().iterator();
        for (int i = 0; i < limit && it.hasNext(); i++) {
            Map.Entry<String, Long> e = it.next();
            if (e.getValue() - nowNanos > 0) {
                return;
            }
            it.remove();
            free(e.getKey());
        }
    }

    private void purge(long nowNanos) {
        purge(nowNanos, 16);
    }
}
