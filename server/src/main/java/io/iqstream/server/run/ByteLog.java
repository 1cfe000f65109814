package io.iqstream.server.run;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The append-only log of one byte stream (a Durable Streams stream): its messages' raw bytes, contiguous in pooled
 * direct segments, and its message boundaries as one {@code long} per message (the byte position after it: the
 * offset a reader resumes from). A fork is a log whose first own position is its fork point and which reads its
 * parent's segments below it: shared, not copied.
 *
 * <p>The other log shape beside {@link RunLog}: a run log stores each AG-UI event as its SSE frame, encoded once at
 * write ({@code id: N}, the event's number, is part of the bytes), and packs and seals its segments; a byte log
 * stores what was appended, byte-exact, and its reader frames it (a catch-up body, SSE data events, base64) because
 * one message is read in several framings and the offset is a byte position, not an event number. Its segments are
 * never packed or rewritten: a fork reads its parent's bytes in place, from its own worker.
 *
 * <p>Written only on its owner worker. Read there and, below a fork point, from a fork's worker. A full table or a
 * refusal is not this log's concern: the caller takes {@link #chargeFor} from the memory budget before
 * {@link #append}.
 *
 * <h2>Implementation notes</h2>
 * <ul>
 *   <li>A message never straddles two segments: one that does not fit in the last segment's room starts a new one,
 *       of {@link #MIN_SEGMENT_BYTES} up to {@link #MAX_SEGMENT_BYTES} (doubling with what the log holds), or of the
 *       message's own size when larger, rounded up to the pool's size class: a segment is asked, held and charged
 *       at what the pool cuts for it.</li>
 *   <li>Bytes once written never change, and everything a reader needs is published through volatile fields (the
 *       table before the counts), so a read on another thread sees whole messages only. Reads hand out slices of
 *       the segments (never copies); a slice that outlives the call is retained by its taker.</li>
 *   <li>{@link #heldBytes()} is what the log holds: its segments, {@link RunLog#SEGMENT_OVERHEAD_BYTES} per
 *       segment (its buffer object and array slots, the bound a run log's segments are charged) and
 *       {@link #INDEX_BYTES_PER_MESSAGE} per boundary. {@link #chargeFor} of a message is exactly what its
 *       {@link #append} adds to it.</li>
 *   <li>Forks hold their parent's segments: {@link #holdForFork} counts them (any thread), and a log is freed only
 *       once {@link #retireIfUnheld} finds none; after that no fork can be made of it.</li>
 * </ul>
 */
public final class ByteLog {
    /** The first segment's size: a stream of a few small messages holds one small segment. */
    public static final int MIN_SEGMENT_BYTES = 512;
    /** The largest segment made for messages smaller than it. */
    public static final int MAX_SEGMENT_BYTES = 16 * 1024;
    /** What one message's boundary costs in the index (its {@code long}, with the index's growth slack). */
    public static final long INDEX_BYTES_PER_MESSAGE = 16;

    /** Message ends and segments, with where each segment starts; replaced whole when either grows. */
    private static final class Table {
        final long[] ends;
        final ByteBuf[] segments;
        final long[] segmentStarts;

        Table(long[] ends, ByteBuf[] segments, long[] segmentStarts) {
            this.ends = ends;
            this.segments = segments;
            this.segmentStarts = segmentStarts;
        }
    }

    private final ByteBufAllocator allocator;
    /** The log this one is a fork of, or null. */
    private final ByteLog parent;
    /** The position of the first own byte: the fork point, else 0. */
    private final long base;
    private volatile Table table = new Table(new long[8], new ByteBuf[2], new long[2]);
    private volatile int segmentCount;
    /** Messages readers see: those committed ({@link #commit}). */
    private volatile int count;
    /** The position after the last committed message. */
    private volatile long tail;
    /** Messages appended, committed or not (the owner's). */
    private int appendedCount;
    /** The position after the last message appended (the owner's). */
    private long appendedTail;
    /** Bytes of the segments allocated (the owner worker's). */
    private long segmentBytes;
    private boolean released;
    /** Forks holding this log's segments; -1 once retired (no fork can be made of it then). */
    private final AtomicInteger forks = new AtomicInteger();

    /** An empty log of its own, starting at position 0. */
    public ByteLog(ByteBufAllocator allocator) {
        this(allocator, null, 0);
    }

    /**
     * A fork of {@code parent} at {@code forkPosition} (a boundary of the parent at most its tail): it reads the
     * parent's messages up to there and then its own. The caller holds the parent ({@link #holdForFork}) for as
     * long as the fork lives, and {@link #releaseFork releases} it when the fork is freed.
     */
    public ByteLog(ByteBufAllocator allocator, ByteLog parent, long forkPosition) {
        this.allocator = allocator;
        this.parent = parent;
        this.base = forkPosition;
        this.tail = forkPosition;
        this.appendedTail = forkPosition;
    }

    /** The position after the last committed message: what readers see (a fork's counts from its parent's start). */
    public long tail() {
        return tail;
    }

    /** The position after the last message appended, committed or not: the next append's start. Owner only. */
    public long appendedTail() {
        return appendedTail;
    }

    /** Messages appended, committed or not. Owner only. */
    public int appendedCount() {
        return appendedCount;
    }

    /**
     * Makes the first {@code messages} appended messages visible to readers (they were written where they must be:
     * on the disk, when the stream is stored there). Owner only; {@code messages} never goes down.
     */
    public void commit(int messages) {
        if (released || messages <= count) {
            return; // a stream freed while its last records were on their way to the disk: nothing to show
        }
        long end = table.ends[messages - 1];
        tail = end;
        count = messages;
    }

    /** Where this log's own messages start: its fork point, or 0. */
    public long forkPosition() {
        return base;
    }

    /** Own messages held (not counting a parent's). */
    public int ownCount() {
        return count;
    }

    /** Own message bytes held (not counting a parent's). */
    public long ownBytes() {
        return appendedTail - base;
    }

    /** Everything this log holds for the memory budget: segments, their fixed overhead and the boundaries. */
    public long heldBytes() {
        return segmentBytes + segmentCount * RunLog.SEGMENT_OVERHEAD_BYTES + appendedCount * INDEX_BYTES_PER_MESSAGE;
    }

    /**
     * What storing a message of {@code length} bytes takes from the memory budget: a new segment (with its
     * overhead) when it does not fit in the last one, plus its boundary. {@link #append} of that message raises
     * {@link #heldBytes()} by exactly that.
     */
    public long chargeFor(int length) {
        return (fitsInLast(length) ? 0 : newSegmentBytes(length) + RunLog.SEGMENT_OVERHEAD_BYTES)
                + INDEX_BYTES_PER_MESSAGE;
    }

    private boolean fitsInLast(int length) {
        int n = segmentCount;
        if (length == 0) {
            return true;
        }
        if (n == 0) {
            return false;
        }
        return table.segments[n - 1].writableBytes() >= length;
    }

    private int newSegmentBytes(int length) {
        long grown = Math.max(MIN_SEGMENT_BYTES, Math.min(MAX_SEGMENT_BYTES, segmentBytes));
        return sizeClass((int) Math.max(length, grown));
    }

    /**
     * {@code size} rounded up to the pooled allocator's size class, the buffer the pool cuts for it (16 B steps to
     * 128 B, then four steps per doubling: 16,385 B is 20,480), so a segment is asked, held and charged at what it
     * takes; above the chunk size (unpooled) or from another allocator, the size itself.
     */
    private int sizeClass(int size) {
        if (!(allocator instanceof PooledByteBufAllocator pooled) || size > pooled.metric().chunkSize()) {
            return size;
        }
        int log2 = 31 - Integer.numberOfLeadingZeros((size << 1) - 1);
        int step = 1 << (log2 < 7 ? 4 : log2 - 3);
        return (size + step - 1) & -step;
    }

    /**
     * Copies {@code message}'s readable bytes in as the next message (the caller keeps its buffer); owner only. Readers
     * see it once it is {@link #commit committed}.
     */
    public void append(ByteBuf message) {
        if (released) {
            throw new IllegalStateException("log released");
        }
        int length = message.readableBytes();
        Table t = table;
        int segments = segmentCount;
        if (!fitsInLast(length)) {
            int size = newSegmentBytes(length);
            if (segments == t.segments.length) {
                t = new Table(t.ends, Arrays.copyOf(t.segments, segments * 2),
                        Arrays.copyOf(t.segmentStarts, segments * 2));
            }
            t.segments[segments] = allocator.directBuffer(size, size);
            t.segmentStarts[segments] = appendedTail;
            segmentBytes += size;
            segments++;
        }
        int n = appendedCount;
        if (n == t.ends.length) {
            t = new Table(Arrays.copyOf(t.ends, n * 2), t.segments, t.segmentStarts);
        }
        if (length > 0) {
            t.segments[segments - 1].writeBytes(message, message.readerIndex(), length);
        }
        long end = appendedTail + length;
        t.ends[n] = end;
        table = t;
        segmentCount = segments;
        appendedTail = end;
        appendedCount = n + 1;
    }

    /** Appends {@code message} and commits it at once (a log kept in memory only). Owner only. */
    public void appendCommitted(ByteBuf message) {
        append(message);
        commit(appendedCount);
    }

    /**
     * Gathers the messages after byte position {@code after}, a fork's parent's first, into {@code out} until it
     * holds {@code maxBytes} (at least one message). The batch holds slices of the segments, not retained.
     *
     * <p>A fork of a fork of ... reads each ancestor's messages up to the next one's fork point. The chain is walked
     * with a loop, not a recursion: a client can make it as long as the budget allows (thousands of forks), and a
     * read of its last fork must not overflow the worker's stack.
     */
    public void collect(long after, MessageBatch out, long maxBytes) {
        if (parent == null || after >= base) {
            collectOwn(after, Long.MAX_VALUE, out, maxBytes);
            return;
        }
        // the logs that hold bytes after `after`, from this fork up to the oldest such ancestor
        ArrayList<ByteLog> chain = new ArrayList<>();
        ByteLog log = this;
        while (true) {
            chain.add(log);
            if (log.parent == null || after >= log.base) {
                break;
            }
            log = log.parent;
        }
        // each reads up to the lowest fork point below it in the chain (a fork may fork its source below its own)
        long[] upTo = new long[chain.size()];
        long limit = Long.MAX_VALUE;
        for (int i = 0; i < upTo.length; i++) {
            upTo[i] = limit;
            limit = Math.min(limit, chain.get(i).base);
        }
        for (int i = upTo.length - 1; i >= 0; i--) {
            if (!chain.get(i).collectOwn(after, upTo[i], out, maxBytes)) {
                return;
            }
        }
    }

    /** This log's own messages after {@code after} ending at or before {@code upTo}; false once {@code out} is full. */
    private boolean collectOwn(long after, long upTo, MessageBatch out, long maxBytes) {
        int n = count;
        for (int i = indexAfter(after); i < n && end(i) <= upTo; i++) {
            if (out.bytes() >= maxBytes && !out.isEmpty()) {
                return false;
            }
            out.add(message(i), end(i));
        }
        return !(out.bytes() >= maxBytes && !out.isEmpty());
    }

    /**
     * The first message after byte position {@code after} (a fork's parent's when below the fork point), its end
     * in {@code endOut[0]}; null when there is none. A slice of its segment, not retained.
     */
    public ByteBuf firstAfter(long after, long[] endOut) {
        MessageBatch one = new MessageBatch();
        collect(after, one, 0);
        if (one.isEmpty()) {
            return null;
        }
        endOut[0] = one.end(0);
        ByteBuf first = one.data(0);
        one.clear();
        return first;
    }

    /** The index of the first own message ending after {@code after} ({@link #ownCount()} when none). */
    private int indexAfter(long after) {
        int n = count;
        long[] ends = table.ends;
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ends[mid] <= after) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The position after own message {@code i} (below {@link #ownCount()}). */
    private long end(int i) {
        return table.ends[i];
    }

    /** Own message {@code i}'s bytes: a slice of its segment (not retained; valid while the log holds them). */
    private ByteBuf message(int i) {
        Table t = table;
        long start = i == 0 ? base : t.ends[i - 1];
        int length = (int) (t.ends[i] - start);
        if (length == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        int s = segmentOf(t, segmentCount, start);
        return t.segments[s].slice((int) (start - t.segmentStarts[s]), length);
    }

    private static int segmentOf(Table t, int segments, long position) {
        int lo = 0;
        int hi = segments - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (t.segmentStarts[mid] <= position) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** Holds this log's segments for a new fork of it; false once it is retired. Any thread. */
    public boolean holdForFork() {
        while (true) {
            int n = forks.get();
            if (n < 0) {
                return false;
            }
            if (forks.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** A fork of this log is gone; true when it was the last one holding it. Any thread. */
    public boolean releaseFork() {
        return forks.decrementAndGet() == 0;
    }

    /** Retires the log when no fork holds it (no fork can be made of it from then on); true when so. Any thread. */
    public boolean retireIfUnheld() {
        return forks.compareAndSet(0, -1);
    }

    /**
     * Releases the segments (and retires the log); once, when the stream is freed, on the owner worker. Returns the
     * own message bytes they held; 0 when already released.
     */
    public long release() {
        forks.set(-1);
        if (released) {
            return 0;
        }
        released = true;
        Table t = table;
        int segments = segmentCount;
        for (int i = 0; i < segments; i++) {
            t.segments[i].release();
            t.segments[i] = null;
        }
        long bytes = appendedTail - base;
        count = 0;
        appendedCount = 0;
        segmentCount = 0;
        segmentBytes = 0;
        return bytes;
    }
}
