package io.iqstream.server.run;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Ids of runs whose retention has passed, remembered for a while so a late reader gets 410 Gone rather than 404.
 * Bounded: past {@code maxEntries} the oldest are forgotten (they then answer 404). Confined to one worker loop.
 */
public final class Tombstones {
    private final LinkedHashMap<String, Long> expiryNanosById = new LinkedHashMap<>();
    private final long keepNanos;
    private final int maxEntries;

    public Tombstones(long keepMs, int maxEntries) {
        this.keepNanos = keepMs * 1_000_000L;
        this.maxEntries = maxEntries;
    }

    public void add(String runId, long nowNanos) {
        if (keepNanos <= 0) {
            return;
        }
        expiryNanosById.remove(runId);
        expiryNanosById.put(runId, nowNanos + keepNanos);
        if (expiryNanosById.size() > maxEntries) {
            Iterator<String> it = expiryNanosById.keySet().iterator();
            it.next();
            it.remove();
        }
    }

    public boolean contains(String runId, long nowNanos) {
        purge(nowNanos);
        Long until = expiryNanosById.get(runId);
        return until != null && until - nowNanos > 0;
    }

    /** Removes a tombstone (the id is being used for a new run). */
    public void remove(String runId) {
        expiryNanosById.remove(runId);
    }

    public int size() {
        return expiryNanosById.size();
    }

    private void purge(long nowNanos) {
        Iterator<Map.Entry<String, Long>> it = expiryNanosById.entrySet().iterator();
        for (int i = 0; i < 16 && it.hasNext(); i++) {
            Map.Entry<String, Long> e = it.next();
            if (e.getValue() - nowNanos > 0) {
                return;
            }
            it.remove();
        }
    }
}
