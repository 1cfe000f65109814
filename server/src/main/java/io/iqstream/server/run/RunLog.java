package io.iqstream.server.run;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ByteProcessor;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The append-only log of one run: every event's SSE frame ({@code id: N\ndata: <json>\n\n}), encoded once, packed
 * back to back into pooled segments.
 *
 * <p>Confined to the run's worker event loop. Not thread-safe by design.
 *
 * <h2>Implementation notes</h2>
 * <ul>
 *   <li>Frames are written once, into the tail segment; bytes already written never change, so a subscriber may
 *       hold a {@link ByteBuf#retainedSlice} of them while later frames are appended behind.</li>
 *   <li>{@code ends[i]} packs the segment of event {@code i+1} (high 32 bits) and the offset just after its frame
 *       (low 32 bits). A frame starts where the previous one in its segment ended, or at 0.</li>
 *   <li>A reader asks for "everything from event k that lies in k's segment": one slice, one write, however many
 *       frames it covers — a reconnecting browser gets its backlog in a few large writes.</li>
 *   <li>{@link #seal()} (on the terminal event) copies the frames into one exact-size buffer so an ended run held
 *       for its retention costs its bytes, not its segments' slack.</li>
 *   <li>{@link #release()} drops the log's references; slices still queued in sockets keep their bytes alive until
 *       written, then the pool gets them back.</li>
 * </ul>
 */
public final class RunLog {
    /** Segment size: large enough for most runs' text events, small enough not to waste on short runs. */
    public static final int SEGMENT_BYTES = 8 * 1024;

    private static final byte[] ID_PREFIX = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA_PREFIX = "\ndata: ".getBytes(StandardCharsets.US_ASCII);

    private final ByteBufAllocator allocator;
    private final SegmentCodec codec;
    private ByteBuf[] segments = new ByteBuf[4];
    /** Unpacked length of each packed segment; 0 while the segment is plain. */
    private int[] packedLength = new int[4];
    private long freedBytes;
    private int[] segmentFirstEvent = new int[4];
    private int segmentCount;
    private long[] ends = new long[64];
    private int size;
    private long frameBytes;
    private long capacityBytes;
    private boolean released;

    /** A log whose full segments are kept plain. */
    public RunLog(ByteBufAllocator allocator) {
        this(allocator, null);
    }

    /** A log whose full segments are packed by {@code codec} (null: kept plain). */
    public RunLog(ByteBufAllocator allocator, SegmentCodec codec) {
        this.allocator = allocator;
        this.codec = codec;
    }

    /** Number of events; also the id of the last one. */
    public int size() {
        return size;
    }

    /** Bytes of the frames held. */
    public long frameBytes() {
        return frameBytes;
    }

    /** Bytes of memory the segments hold (frames plus slack), for the memory budget. */
    public long capacityBytes() {
        return capacityBytes;
    }

    /** Free bytes in the tail segment (0 when there is none). */
    public int tailWritableBytes() {
        return segmentCount == 0 || released || packedLength[segmentCount - 1] != 0 ? 0
                : segments[segmentCount - 1].writableBytes();
    }

    /** The frame size an event of {@code jsonLength} bytes gets once stored as event {@code size()+1}. */
    public int frameLength(int jsonLength) {
        return ID_PREFIX.length + digits(size + 1) + DATA_PREFIX.length + jsonLength + 2;
    }

    /**
     * Appends the event whose JSON is {@code json}'s readable bytes (a CR or LF inside, legal only as whitespace
     * between tokens, is written as a space). Returns the bytes of memory newly taken (a new segment), or 0.
     */
    public long append(ByteBuf json) {
        return append(json, frameLength(json.readableBytes()));
    }

    /** {@link #append(ByteBuf)} for a caller that has already asked {@link #frameLength} (the size checks). */
    long append(ByteBuf json, int frameLength) {
        int jsonLength = json.readableBytes();
        long taken = 0;
        ByteBuf tail = segmentCount == 0 ? null : segments[segmentCount - 1];
        if (tail == null || tail.writableBytes() < frameLength) {
            taken = newSegment(Math.max(SEGMENT_BYTES, frameLength));
            tail = segments[segmentCount - 1];
        }
        int id = size + 1;
        tail.writeBytes(ID_PREFIX);
        writeDigits(tail, id);
        tail.writeBytes(DATA_PREFIX);
        int jsonStart = tail.writerIndex();
        tail.writeBytes(json, json.readerIndex(), jsonLength);
        if (json.forEachByte(json.readerIndex(), jsonLength, ByteProcessor.FIND_CRLF) >= 0) {
            // rare: pretty-printed JSON; a line break between tokens must not break the frame
            for (int i = jsonStart, end = tail.writerIndex(); i < end; i++) {
                byte b = tail.getByte(i);
                if (b == '\n' || b == '\r') {
                    tail.setByte(i, ' ');
                }
            }
        }
        tail.writeByte('\n').writeByte('\n');
        if (size == ends.length) {
            ends = Arrays.copyOf(ends, size * 2);
        }
        ends[size++] = ((long) (segmentCount - 1) << 32) | tail.writerIndex();
        frameBytes += frameLength;
        return taken;
    }

    private long newSegment(int capacity) {
        if (segmentCount > 0) {
            pack(segmentCount - 1);
        }
        if (segmentCount == segments.length) {
            segments = Arrays.copyOf(segments, segmentCount * 2);
            segmentFirstEvent = Arrays.copyOf(segmentFirstEvent, segmentCount * 2);
            packedLength = Arrays.copyOf(packedLength, segmentCount * 2);
        }
        ByteBuf seg = allocator.directBuffer(capacity, capacity);
        segments[segmentCount] = seg;
        segmentFirstEvent[segmentCount] = size;
        segmentCount++;
        capacityBytes += seg.capacity();
        return seg.capacity();
    }

    /** Packs segment {@code k} when a codec is set and packing saves memory. */
    private void pack(int k) {
        ByteBuf plain = segments[k];
        if (codec == null || packedLength[k] != 0 || plain.writerIndex() == 0) {
            return;
        }
        int length = plain.writerIndex();
        ByteBuf packed = codec.pack(plain, length);
        if (packed.capacity() >= plain.capacity()) {
            packed.release();
            return;
        }
        freedBytes += plain.capacity() - packed.capacity();
        capacityBytes -= plain.capacity() - packed.capacity();
        plain.release();
        segments[k] = packed;
        packedLength[k] = length;
    }

    /** Bytes given back by packing since the last call (for the memory budget). */
    public long takeFreedBytes() {
        long f = freedBytes;
        freedBytes = 0;
        return f;
    }

    /**
     * Seals the log after its last event: with a codec, packs the tail segment too; without, copies every frame
     * into one buffer of exactly their size and frees the segments. Returns the change in bytes held (negative:
     * memory given back).
     */
    public long seal() {
        if (codec != null) {
            long before = capacityBytes;
            if (segmentCount > 0) {
                pack(segmentCount - 1);
                freedBytes = 0;
            }
            return capacityBytes - before;
        }
        if (segmentCount <= 1 && (segmentCount == 0 || segments[0].writableBytes() == 0)) {
            return 0;
        }
        long before = capacityBytes;
        ByteBuf whole = allocator.directBuffer((int) frameBytes, (int) frameBytes);
        for (int i = 0; i < segmentCount; i++) {
            ByteBuf s = segments[i];
            whole.writeBytes(s, 0, s.writerIndex());
            s.release();
            segments[i] = null;
        }
        long offset = 0;
        long previousOld = 0;
        for (int i = 0; i < size; i++) {
            long old = ends[i];
            int seg = (int) (old >>> 32);
            int start = i > 0 && (int) (previousOld >>> 32) == seg ? (int) previousOld : 0;
            offset += (int) old - start;
            ends[i] = offset;
            previousOld = old;
        }
        segments[0] = whole;
        segmentFirstEvent[0] = 0;
        segmentCount = 1;
        capacityBytes = whole.capacity();
        return capacityBytes - before;
    }

    private int startOf(int eventIndex, int segment) {
        if (eventIndex == 0) {
            return 0;
        }
        long prev = ends[eventIndex - 1];
        return (int) (prev >>> 32) == segment ? (int) prev : 0;
    }

    /**
     * The frames from event id {@code fromId} (1-based) up to the end of that event's segment, as a retained slice
     * the caller must write or release. {@code fromId} must be in {@code 1..size()}.
     */
    public ByteBuf readFrom(int fromId) {
        int i = fromId - 1;
        int seg = (int) (ends[i] >>> 32);
        int last = seg + 1 < segmentCount ? segmentFirstEvent[seg + 1] - 1 : size - 1;
        int start = startOf(i, seg);
        int end = (int) ends[last];
        if (packedLength[seg] != 0) {
            ByteBuf whole = codec.unpack(segments[seg], packedLength[seg]);
            ByteBuf slice = whole.retainedSlice(start, end - start);
            whole.release();
            return slice;
        }
        return segments[seg].retainedSlice(start, end - start);
    }

    /** The id of the last event {@link #readFrom(int)} would return for {@code fromId}. */
    public int lastIdInSegmentOf(int fromId) {
        int seg = (int) (ends[fromId - 1] >>> 32);
        return seg + 1 < segmentCount ? segmentFirstEvent[seg + 1] : size;
    }

    /** Frees the segments. Returns the bytes given back. Idempotent. */
    public long release() {
        if (released) {
            return 0;
        }
        released = true;
        for (int i = 0; i < segmentCount; i++) {
            segments[i].release();
            segments[i] = null;
        }
        segmentCount = 0;
        long freed = capacityBytes;
        capacityBytes = 0;
        return freed;
    }

    public boolean isReleased() {
        return released;
    }

    static int digits(int n) {
        int d = 1;
        while (n >= 10) {
            n /= 10;
            d++;
        }
        return d;
    }

    private static void writeDigits(ByteBuf buf, int n) {
        int d = digits(n);
        int at = buf.writerIndex();
        buf.ensureWritable(d);
        for (int i = d - 1; i >= 0; i--) {
            buf.setByte(at + i, '0' + n % 10);
            n /= 10;
        }
        buf.writerIndex(at + d);
    }
}
