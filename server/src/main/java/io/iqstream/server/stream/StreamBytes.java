package io.iqstream.server.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * A durable stream's own bytes, contiguous in pooled direct segments, and its message boundaries as one
 * {@code long} per message (the byte position after it). Positions are the stream's: a fork's first own message
 * starts at its fork point. A message never straddles two segments: one that does not fit in the last segment's
 * room starts a new one, of {@link #MIN_SEGMENT_BYTES} up to {@link #MAX_SEGMENT_BYTES} (doubling with what the
 * stream holds), or of the message's own size when larger.
 *
 * <p>Written only on the stream's owner worker. Read there and, below a fork point, from a fork's worker: bytes
 * once written never change, and everything a reader needs is published through volatile fields (the table before
 * the counts), so a read on another thread sees whole messages only. Reads hand out slices of the segments (never
 * copies); a slice that outlives the call is retained by its taker.
 */
final class StreamBytes {
    /** The first segment's size: a stream of a few small messages holds one small segment. */
    static final int MIN_SEGMENT_BYTES = 512;
    /** The largest segment made for messages smaller than it. */
    static final int MAX_SEGMENT_BYTES = 16 * 1024;
    /** What one message's boundary costs in the index (its {@code long}, with the index's growth slack). */
    static final long INDEX_BYTES_PER_MESSAGE = 16;

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

    private final long base;
    private volatile Table table = new Table(new long[8], new ByteBuf[2], new long[2]);
    private volatile int segmentCount;
    private volatile int count;
    private volatile long tail;
    /** Bytes of the segments allocated (the owner worker's). */
    private long segmentBytes;
    private boolean released;

    /** @param base the position of the first own byte (a fork's fork point, else 0) */
    StreamBytes(long base) {
        this.base = base;
        this.tail = base;
    }

    /** The position after the last message. */
    long tail() {
        return tail;
    }

    /** Messages held. */
    int count() {
        return count;
    }

    /** Bytes of the segments allocated: what the stream holds for its messages. */
    long segmentBytes() {
        return segmentBytes;
    }

    /**
     * What storing a message of {@code length} bytes takes from the memory budget: a new segment's size when it
     * does not fit in the last one, plus its boundary. {@link #append} of that message allocates exactly that.
     */
    long chargeFor(int length) {
        return (fitsInLast(length) ? 0 : newSegmentBytes(length)) + INDEX_BYTES_PER_MESSAGE;
    }

    private boolean fitsInLast(int length) {
        int n = segmentCount;
        if (length == 0) {
            return true;
        }
        if (n == 0) {
            return false;
        }
        ByteBuf last = table.segments[n - 1];
        return last.writableBytes() >= length;
    }

    private int newSegmentBytes(int length) {
        long grown = Math.max(MIN_SEGMENT_BYTES, Math.min(MAX_SEGMENT_BYTES, segmentBytes));
        return (int) Math.max(length, grown);
    }

    /** Copies {@code message}'s readable bytes in as the next message; on the owner worker. */
    void append(ByteBufAllocator alloc, ByteBuf message) {
        int length = message.readableBytes();
        Table t = table;
        int segments = segmentCount;
        if (!fitsInLast(length)) {
            int size = newSegmentBytes(length);
            if (segments == t.segments.length) {
                t = new Table(t.ends, java.util.Arrays.copyOf(t.segments, segments * 2),
                        java.util.Arrays.copyOf(t.segmentStarts, segments * 2));
            }
            t.segments[segments] = alloc.directBuffer(size, size);
            t.segmentStarts[segments] = tail;
            segmentBytes += size;
            segments++;
        }
        int n = count;
        if (n == t.ends.length) {
            t = new Table(java.util.Arrays.copyOf(t.ends, n * 2), t.segments, t.segmentStarts);
        }
        if (length > 0) {
            t.segments[segments - 1].writeBytes(message, message.readerIndex(), length);
        }
        long end = tail + length;
        t.ends[n] = end;
        table = t;
        segmentCount = segments;
        tail = end;
        count = n + 1;
    }

    /** The index of the first message ending after {@code after} ({@link #count()} when none). */
    int firstAfter(long after) {
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

    /** The position after message {@code i} (below {@link #count()}). */
    long end(int i) {
        return table.ends[i];
    }

    /** Message {@code i}'s bytes: a slice of its segment (not retained; valid while the stream holds them). */
    ByteBuf message(int i) {
        int n = count;
        Table t = table;
        long start = i == 0 ? base : t.ends[i - 1];
        int length = (int) (t.ends[i] - start);
        if (length == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        int s = segmentOf(t, segmentCount, start);
        assert i < n;
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

    /** Releases the segments; once, when the stream is freed. Returns the message bytes they held. */
    long release() {
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
        long bytes = tail - base;
        count = 0;
        segmentCount = 0;
        segmentBytes = 0;
        return bytes;
    }
}
