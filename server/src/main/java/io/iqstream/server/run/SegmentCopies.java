package io.iqstream.server.run;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;

/**
 * The unpacked copies of packed log segments that readers are reading now, one per segment however many readers
 * read it, each charged to the memory budget while it exists (all copies together: at most a quarter of the
 * budget, {@link MemoryBudget#tryChargeCopy}, so readers of old history never crowd out new runs). One per worker, confined to its event loop (the
 * readers' slices are written and released on that loop too).
 *
 * <h2>Implementation notes</h2>
 * A copy is made on the first read of a packed segment that has none ({@link #unpack}); every read of that segment
 * then gets a retained slice of the same copy. The copy keeps one reference of its own; when that is the only one
 * left ({@code refCnt() == 1}: every slice has been written to its socket and released) the copy is idle, and
 * {@link #sweep()} frees it and gives its bytes back. The registry sweeps a few times a second, and a read that
 * cannot be charged sweeps once before giving up. When the budget cannot take a copy, {@link #unpack} returns null:
 * the reader waits and retries, or is refused (a new subscriber: 503) — the direct memory behind packed runs is
 * never taken without being counted, so sixty subscribers resuming a packed run hold one copy, not sixty.
 */
public final class SegmentCopies {
    /** Heap charged per copy on top of its bytes: the buffer object and this list's entry. */
    static final long COPY_OVERHEAD_BYTES = 128;

    private final MemoryBudget budget;
    private final ArrayList<Entry> entries = new ArrayList<>();
    private long heldBytes;
    private long refused;

    /** Copies charged to {@code budget} (null: uncounted, for tests of the log alone). */
    public SegmentCopies(MemoryBudget budget) {
        this.budget = budget;
    }

    private record Entry(RunLog log, int segment, ByteBuf copy, long chargedBytes) {}

    /**
     * Unpacks segment {@code k} of {@code log} into a new shared copy charged to the budget, or returns null when
     * the budget cannot take it even after freeing idle copies.
     */
    ByteBuf unpack(RunLog log, int k, SegmentCodec codec, ByteBuf packed, int length) {
        long cost = length + COPY_OVERHEAD_BYTES;
        if (!tryCharge(cost)) {
            sweep();
            if (!tryCharge(cost)) {
                refused++;
                return null;
            }
        }
        ByteBuf copy = codec.unpack(packed, length);
        entries.add(new Entry(log, k, copy, cost));
        heldBytes += cost;
        return copy;
    }

    private boolean tryCharge(long bytes) {
        return budget == null || budget.tryChargeCopy(bytes);
    }

    private void free(Entry e) {
        e.log().copyDropped(e.segment());
        e.copy().release();
        heldBytes -= e.chargedBytes();
        if (budget != null) {
            budget.releaseCopy(e.chargedBytes());
        }
    }

    /** Frees every copy no reader holds a slice of. Returns the bytes given back. */
    public long sweep() {
        long before = heldBytes;
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e.copy().refCnt() == 1) {
                removeAt(i);
                free(e);
            }
        }
        return before - heldBytes;
    }

    /** Frees the copies of {@code log} (being released); slices still in sockets keep their bytes until written. */
    void dropAll(RunLog log) {
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e.log() == log) {
                removeAt(i);
                free(e);
            }
        }
    }

    private void removeAt(int i) {
        int last = entries.size() - 1;
        entries.set(i, entries.get(last));
        entries.remove(last);
    }

    /** Copies alive now. */
    public int size() {
        return entries.size();
    }

    /** Bytes charged for the copies alive now. */
    public long heldBytes() {
        return heldBytes;
    }

    /** Reads refused because the budget could not take a copy. */
    public long refused() {
        return refused;
    }
}
