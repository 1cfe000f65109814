package io.iqstream.server.run;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

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
 *
 * <p>The newest packed segment of a live run lingers: when a live run packs its full tail segment, the plain
 * segment itself becomes that segment's copy ({@link #adopt}: no unpack, no new memory) and is kept for
 * {@link #LINGER_NANOS} even when idle, because a browser that drops inside an answer reconnects about a second
 * later and resumes some fifty events back — in that segment, so its first replayed frames need no unpack. It is
 * charged like any copy, taken only while the budget is at most half used, replaced by the next packed segment's,
 * and dropped when the run seals; the periodic {@link #sweep(long)} frees it once its time has passed, and a
 * refusal (a copy, a new run or an append the budget cannot take) first frees it with {@link #sweep()}.
 */
public final class SegmentCopies {
    /** Heap charged per copy on top of its bytes: the buffer object and this list's entry. */
    static final long COPY_OVERHEAD_BYTES = 128;
    /** How long the newest packed segment of a live run stays unpacked when idle: a reconnect's delay, and some. */
    public static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final MemoryBudget budget;
    private final LongSupplier clockNanos;
    private final ArrayList<Entry> entries = new ArrayList<>();
    private long heldBytes;
    private long refused;

    /** Copies charged to {@code budget} (null: uncounted, for tests of the log alone). */
    public SegmentCopies(MemoryBudget budget) {
        this(budget, System::nanoTime);
    }

    /** Copies charged to {@code budget}, lingering by {@code clockNanos} (tests pass a clock they move). */
    public SegmentCopies(MemoryBudget budget, LongSupplier clockNanos) {
        this.budget = budget;
        this.clockNanos = clockNanos;
    }

    /** One copy; only an adopted one {@code lingers} (until {@code keepUntilNanos}); a read's is freed once idle. */
    private record Entry(RunLog log, int segment, ByteBuf copy, long chargedBytes, boolean lingers,
            long keepUntilNanos) {}

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
        entries.add(new Entry(log, k, copy, cost, false, 0));
        heldBytes += cost;
        return copy;
    }

    /**
     * Takes {@code plain}, the full segment {@code k} of a live {@code log} just packed, as that segment's copy,
     * lingering for {@link #LINGER_NANOS}; takes over the log's reference. False (nothing taken: the caller frees
     * the segment) when the budget is more than half used or cannot take its charge.
     */
    boolean adopt(RunLog log, int k, ByteBuf plain) {
        long cost = plain.capacity() + COPY_OVERHEAD_BYTES;
        if (budget != null && budget.committedBytes() + cost > budget.budgetBytes() / 2) {
            return false;
        }
        if (!tryCharge(cost)) {
            return false;
        }
        entries.add(new Entry(log, k, plain, cost, true, clockNanos.getAsLong() + LINGER_NANOS));
        heldBytes += cost;
        return true;
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

    /** Frees every copy no reader holds a slice of, lingering or not (memory is short). Returns the bytes given back. */
    public long sweep() {
        return sweep(true, 0);
    }

    /** Frees the copies no reader holds a slice of whose linger ends by {@code nowNanos}. Returns the bytes given back. */
    public long sweep(long nowNanos) {
        return sweep(false, nowNanos);
    }

    private long sweep(boolean force, long nowNanos) {
        long before = heldBytes;
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e.copy().refCnt() == 1 && (force || !e.lingers() || nowNanos - e.keepUntilNanos() >= 0)) {
                removeAt(i);
                free(e);
            }
        }
        return before - heldBytes;
    }

    /** Frees the copies of {@code log} (being released); slices still in sockets keep their bytes until written. */
    void dropAll(RunLog log) {
        drop(log, false);
    }

    /** Frees the copies of {@code log} no reader holds a slice of, lingering or not (the log sealed or moved on). */
    void dropIdle(RunLog log) {
        drop(log, true);
    }

    private void drop(RunLog log, boolean idleOnly) {
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e.log() == log && (!idleOnly || e.copy().refCnt() == 1)) {
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
