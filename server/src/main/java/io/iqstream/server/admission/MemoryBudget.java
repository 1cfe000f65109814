package io.iqstream.server.admission;

import io.iqstream.server.metrics.BudgetGauges;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The byte budget for event logs, shared by all workers; any thread (one atomic add per segment, not per event).
 *
 * <h2>Implementation notes</h2>
 * A new run is admitted only if the budget can hold a run of the expected size on top of what is committed
 * ({@link #tryAdmitRun()}); the expected size is learned from ended runs (moving average), so the runs already
 * streaming can grow to completion. Their growth is charged as segments are taken ({@link #charge}); it may pass
 * the budget by the headroom (a quarter) — beyond that an append is refused, which is the last line against an
 * OutOfMemoryError, not the normal way to say no.
 *
 * <p>The budget is sized from direct memory, where logs live, and the heap is smaller than it (a third of an
 * explicit budget, a fifth of the container). So what a client makes the server keep on the heap — a durable
 * stream's bookkeeping, its path, its {@code Stream-Seq}, its producers — is charged twice over: to the budget like
 * everything else, and to the heap's share ({@link #tryChargeHeap}, a quarter of the JVM's heap by default), so that
 * such objects are refused (503) while the heap still has room, whatever the budget says.
 */
public final class MemoryBudget implements BudgetGauges {
    /** Starting guess of a run's size: a WORKLOAD.md run is about 70 KiB of frames. */
    public static final long INITIAL_EXPECTED_RUN_BYTES = 96 * 1024;

    private final long budgetBytes;
    private final long hardLimitBytes;
    /** Tombstones may take at most this fraction (1/n) of the budget. */
    public static final int TOMBSTONE_SHARE_DIVISOR = 16;
    /** Unpacked copies of packed segments may take at most this fraction (1/n) of the budget. */
    public static final int COPY_SHARE_DIVISOR = 4;
    /** Request bodies being gathered (not yet answered) may take at most this fraction (1/n) of the budget. */
    public static final int BODY_SHARE_DIVISOR = 4;

    private final AtomicLong committedBytes = new AtomicLong();
    private final AtomicLong tombstoneBytes = new AtomicLong();
    private final AtomicLong copyBytes = new AtomicLong();
    private final AtomicLong bodyBytes = new AtomicLong();
    private final LongAdder runsRefused = new LongAdder();
    private volatile long expectedRunBytes = INITIAL_EXPECTED_RUN_BYTES;
    private final int maxSubscribers;
    private final AtomicInteger subscribers = new AtomicInteger();
    /** Heap that clients' kept objects may take ({@link #tryChargeHeap}). */
    private final long heapShareBytes;
    private final AtomicLong heapBytes = new AtomicLong();

    /** A budget with no cap on subscriber connections. */
    public MemoryBudget(long budgetBytes) {
        this(budgetBytes, Integer.MAX_VALUE);
    }

    /**
     * A budget for event logs and a cap on subscriber connections (their memory is heap and socket buffers); the
     * heap share is {@link #defaultHeapShare} of this JVM's heap.
     */
    public MemoryBudget(long budgetBytes, int maxSubscribers) {
        this(budgetBytes, maxSubscribers, defaultHeapShare(Runtime.getRuntime().maxMemory()));
    }

    /** As above, with the heap that clients' kept objects may take ({@link #tryChargeHeap}). */
    public MemoryBudget(long budgetBytes, int maxSubscribers, long heapShareBytes) {
        this.budgetBytes = budgetBytes;
        this.hardLimitBytes = budgetBytes + budgetBytes / 4;
        this.maxSubscribers = maxSubscribers;
        this.heapShareBytes = heapShareBytes;
    }

    /**
     * The heap share by default: a quarter of the heap. Half is kept for connections (their heads, pipelines and
     * cursors: {@code MemoryPlan#connectionsCovered}), the rest for runs' indexes, tombstones and the collector's
     * room.
     */
    public static long defaultHeapShare(long maxHeapBytes) {
        return maxHeapBytes / 4;
    }

    /** The default subscriber cap: a share of the heap at about 8 KiB per connection. */
    public static int defaultMaxSubscribers(long maxHeapBytes) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(64, maxHeapBytes / 2 / (8 * 1024)));
    }

    /** Takes a subscriber slot; false when connection memory is at its cap (503). */
    public boolean tryAdmitSubscriber() {
        while (true) {
            int cur = subscribers.get();
            if (cur >= maxSubscribers) {
                return false;
            }
            if (subscribers.compareAndSet(cur, cur + 1)) {
                return true;
            }
        }
    }

    public void releaseSubscriber() {
        subscribers.decrementAndGet();
    }

    public int maxSubscribers() {
        return maxSubscribers;
    }

    @Override
    public long budgetBytes() {
        return budgetBytes;
    }

    @Override
    public long committedBytes() {
        return committedBytes.get();
    }

    @Override
    public long expectedRunBytes() {
        return expectedRunBytes;
    }

    /** True when another run of the expected size would not fit: /readyz says 503. */
    public boolean isFull() {
        return committedBytes.get() + expectedRunBytes > budgetBytes;
    }

    /** Reserves the expected size of a new run; returns the bytes reserved, or -1 when refused. */
    public long tryAdmitRun() {
        long want = expectedRunBytes;
        while (true) {
            long cur = committedBytes.get();
            if (cur + want > budgetBytes) {
                runsRefused.increment();
                return -1;
            }
            if (committedBytes.compareAndSet(cur, cur + want)) {
                return want;
            }
        }
    }

    /**
     * Takes {@code bytes} more for a run already admitted, whose log would then hold {@code runBytes}. Within the
     * budget, always; past it, only a run of ordinary size (at most twice the expected) may use the headroom, so an
     * oversized run is the one refused when memory is short, not the ordinary answers streaming beside it.
     * False when refused.
     */
    public boolean charge(long bytes, long runBytes) {
        while (true) {
            long cur = committedBytes.get();
            long limit = runBytes <= 2 * expectedRunBytes ? hardLimitBytes : budgetBytes;
            if (cur + bytes > limit) {
                return false;
            }
            if (committedBytes.compareAndSet(cur, cur + bytes)) {
                return true;
            }
        }
    }

    /**
     * Takes {@code bytes} for memory whose refusal harms no run already streaming — a shared unpacked copy of a
     * packed segment, a tombstone: only within the budget proper, never its headroom (which is kept for the
     * growth of runs in flight). False when refused.
     */
    public boolean tryChargeWithinBudget(long bytes) {
        while (true) {
            long cur = committedBytes.get();
            if (cur + bytes > budgetBytes) {
                return false;
            }
            if (committedBytes.compareAndSet(cur, cur + bytes)) {
                return true;
            }
        }
    }

    /**
     * Takes {@code bytes} for a tombstone: within the budget and within the tombstones' share of it
     * ({@link #TOMBSTONE_SHARE_DIVISOR}), so remembered ids never crowd out runs. False when refused (the caller
     * then forgets its oldest tombstone).
     */
    public boolean tryChargeTombstone(long bytes) {
        return tryChargeShare(tombstoneBytes, bytes, budgetBytes / TOMBSTONE_SHARE_DIVISOR);
    }

    /** Gives back the bytes of tombstones forgotten or expired. */
    public void releaseTombstone(long bytes) {
        tombstoneBytes.addAndGet(-bytes);
        release(bytes);
    }

    /**
     * Takes {@code bytes} for a shared unpacked copy of a packed segment: within the budget and within the copies'
     * share of it ({@link #COPY_SHARE_DIVISOR}), so readers of old history never crowd out new runs. False when
     * refused (the reader waits, or a new subscriber gets 503).
     */
    public boolean tryChargeCopy(long bytes) {
        return tryChargeShare(copyBytes, bytes, budgetBytes / COPY_SHARE_DIVISOR);
    }

    /** Gives back the bytes of an unpacked copy freed. */
    public void releaseCopy(long bytes) {
        copyBytes.addAndGet(-bytes);
        release(bytes);
    }

    /** Bytes charged for unpacked copies now (all workers). */
    @Override
    public long copyBytes() {
        return copyBytes.get();
    }

    /**
     * Takes {@code bytes} more for a request body being gathered before it is answered: within the budget and
     * within the bodies' share of it ({@link #BODY_SHARE_DIVISOR}), so half-sent bodies never crowd out the logs
     * they would be appended to. False when refused (the request gets 503 and its connection is closed).
     */
    public boolean tryChargeBody(long bytes) {
        return tryChargeShare(bodyBytes, bytes, budgetBytes / BODY_SHARE_DIVISOR);
    }

    /** Gives back the bytes of a gathered body answered, refused or dropped with its connection. */
    public void releaseBody(long bytes) {
        bodyBytes.addAndGet(-bytes);
        release(bytes);
    }

    /** Bytes charged for request bodies being gathered now (all workers). */
    public long bodyBytes() {
        return bodyBytes.get();
    }

    /** Takes {@code bytes} within the budget proper and within {@code share}'s cap; false when either refuses. */
    private boolean tryChargeShare(AtomicLong share, long bytes, long capBytes) {
        // the share is checked, then the budget; two workers racing past the share overshoot it by one item each
        if (share.get() + bytes > capBytes || !tryChargeWithinBudget(bytes)) {
            return false;
        }
        share.addAndGet(bytes);
        return true;
    }

    /**
     * Takes {@code bytes} for objects a client makes the server keep on the heap (a durable stream's bookkeeping,
     * its path, its last {@code Stream-Seq}, its producers): within the budget proper and within the heap share.
     * False when refused (the request gets 503).
     */
    public boolean tryChargeHeap(long bytes) {
        return tryChargeShare(heapBytes, bytes, heapShareBytes);
    }

    /**
     * Takes {@code bytes} of heap whatever the limits say: what a node recovers from its data directory at start
     * was acknowledged, and is loaded (the caller logs when this passes the budget). Returns false when it did.
     */
    public boolean forceChargeHeap(long bytes) {
        heapBytes.addAndGet(bytes);
        return committedBytes.addAndGet(bytes) <= budgetBytes && heapBytes.get() <= heapShareBytes;
    }

    /** As {@link #forceChargeHeap}, for log memory (a recovered stream's segments). */
    public boolean forceCharge(long bytes) {
        return committedBytes.addAndGet(bytes) <= budgetBytes;
    }

    /** Gives back heap taken by {@link #tryChargeHeap}. */
    public void releaseHeap(long bytes) {
        heapBytes.addAndGet(-bytes);
        release(bytes);
    }

    /** Heap charged by {@link #tryChargeHeap} now (all workers). */
    @Override
    public long heapBytes() {
        return heapBytes.get();
    }

    /** The heap share {@link #tryChargeHeap} may take. */
    @Override
    public long heapShareBytes() {
        return heapShareBytes;
    }

    /** Bytes charged for tombstones now (all workers). */
    public long tombstoneBytes() {
        return tombstoneBytes.get();
    }

    /** Gives bytes back (segments freed, reservations dropped). */
    public void release(long bytes) {
        committedBytes.addAndGet(-bytes);
    }

    /** Learns from a run that ended holding {@code runBytes} (its log's memory just before sealing). */
    public void learnRunSize(long runBytes) {
        long e = expectedRunBytes;
        long next = e + (Math.max(runBytes, 4096) - e) / 16;
        expectedRunBytes = Math.max(4096, next);
    }

    public long runsRefused() {
        return runsRefused.sum();
    }
}
