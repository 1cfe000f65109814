package io.iqstream.server.run;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ByteProcessor;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The append-only log of one run: every event's SSE frame ({@code id: N\ndata: <json>\n\n}), encoded once, packed
 * back to back into pooled segments, with a per-event index of where each frame ends.
 *
 * <p>Confined to the run's worker event loop. Not thread-safe by design.
 *
 * <h2>Implementation notes</h2>
 * <ul>
 *   <li>Frames are written once, into the tail segment; bytes already written never change, so a subscriber may
 *       hold a {@link ByteBuf#retainedSlice} of them while later frames are appended behind.</li>
 *   <li>The index holds, per event, the offset just after its frame inside its segment (an {@code int}); the
 *       segment of an event is found by binary search over the segments' first events. It is paged
 *       ({@value #INDEX_PAGE_EVENTS} events, 8 KiB, per page; the first page grows by doubling from 64 so a short
 *       run pays little), so it grows without copying, and its pages are pooled direct buffers: the budget counts
 *       direct memory, and the heap holds only fixed-size objects per run and per segment.</li>
 *   <li>{@link #heldBytes()} is everything this log holds: segments (direct; a packed or sealed one at the pool's
 *       size class it was cut from, {@link #allocatedBytes}), the index, a fixed charge per segment
 *       for its buffer object and array slots, and a fixed charge for the run's own objects. The registry charges
 *       the memory budget with {@link #heldBytesAfterAppend} <em>before</em> an append, so a run's accounted size
 *       is its real size; a run of a million tiny events is refused by the budget, not by an OutOfMemoryError.</li>
 *   <li>A reader asks for "everything from event k that lies in k's segment": one slice, one write, however many
 *       frames it covers — a reconnecting browser gets its backlog in a few large writes.</li>
 *   <li>A packed segment is read through one shared unpacked copy ({@link SegmentCopies}), charged to the budget
 *       while it exists and released once no reader holds a slice of it; when the budget cannot take the copy,
 *       {@link #readFrom} returns null and the reader waits (or is refused). On a live run the segment packed
 *       last keeps its plain bytes as its copy for a short while ({@link SegmentCopies#LINGER_NANOS}), so a
 *       browser reconnecting into it is answered without an unpack; sealing drops it.</li>
 *   <li>Ids are {@code long} at the API: any id, however large or negative, is answered without arithmetic
 *       overflow (out of range: nothing to read).</li>
 *   <li>{@link #seal()} (on the terminal event) copies the frames into one buffer so an ended run held for its
 *       retention costs its bytes (to the pool's size class), not its segments' slack. With packing it packs the
 *       tail and frees the index: an ended run is read a segment at a time through its unpacked copy, and a read
 *       that starts or stops inside a segment finds its frame by counting frame ends ({@code \n\n}, which only
 *       ends a frame: a line break inside an event's JSON is stored as a space) in that copy. The index was a
 *       sixth of an ended WORKLOAD.md run's held bytes (2 KiB of 12.8).</li>
 *   <li>{@link #release()} drops the log's references; slices still queued in sockets keep their bytes alive until
 *       written, then the pool gets them back.</li>
 * </ul>
 */
public final class RunLog {
    /** Segment size: large enough for most runs' text events, small enough not to waste on short runs. */
    public static final int SEGMENT_BYTES = 8 * 1024;
    /** Events per full index page (4 bytes each: 8 KiB). */
    public static final int INDEX_PAGE_EVENTS = 2048;
    /**
     * Heap charged per segment: its pooled buffer object and its slots in four growing arrays. Measured: 400 ended
     * WORKLOAD.md runs (nine segments each), taken beyond a first 400, held 2,360–2,735 B of heap each over six
     * runs of {@code EndedRunChargeTest} (which fails unless held and charged agree within 10 %), against the
     * 2,560 B charged with this.
     */
    public static final long SEGMENT_OVERHEAD_BYTES = 152;
    /**
     * Heap charged once per run: the run, this log, their small arrays, the registry entry and the id. A bound:
     * measured, an ended one-segment run holds 1,014 B of heap against the 1,176 B these two charge
     * ({@code MemoryFootprintTest}, which fails when a run holds more; docs/OPERATIONS.md has the command).
     */
    public static final long RUN_OVERHEAD_BYTES = 1024;
    /** What {@link #readFrom} returns when there is nothing to read at that id. */
    public static final ByteBuf NOTHING = Unpooled.EMPTY_BUFFER;

    private static final int FIRST_PAGE_EVENTS = 64;
    private static final long ARRAY_HEADER_BYTES = 16;
    private static final byte[] ID_PREFIX = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA_PREFIX = "\ndata: ".getBytes(StandardCharsets.US_ASCII);

    private final ByteBufAllocator allocator;
    private final SegmentCodec codec;
    private final SegmentCopies copies;
    private ByteBuf[] segments = new ByteBuf[4];
    /** Unpacked length of each packed segment; 0 while the segment is plain. */
    private int[] packedLength = new int[4];
    /** The shared unpacked copy of each packed segment, while one exists (owned by {@link #copies}). */
    private ByteBuf[] unpacked;
    private int copiesHeld;
    private long freedBytes;
    private int[] segmentFirstEvent = new int[4];
    private int segmentCount;
    /**
     * Index pages in pooled direct memory (4 bytes per event), so what the budget counts is direct memory; null
     * once a packed log is sealed (frame ends are then found in the segment's bytes).
     */
    private ByteBuf[] index = new ByteBuf[4];
    private long indexBytes;
    private long pageTableBytes;
    private int size;
    private long frameBytes;
    private long capacityBytes;
    private boolean released;

    /** A log whose full segments are kept plain. */
    public RunLog(ByteBufAllocator allocator) {
        this(allocator, null, null);
    }

    /** A log whose full segments are packed by {@code codec} (null: kept plain), each read unpacking on its own. */
    public RunLog(ByteBufAllocator allocator, SegmentCodec codec) {
        this(allocator, codec, null);
    }

    /**
     * A log whose full segments are packed by {@code codec} (null: kept plain) and read through the shared,
     * budgeted unpacked copies of {@code copies} (null: every read unpacks its own, uncounted copy).
     */
    public RunLog(ByteBufAllocator allocator, SegmentCodec codec, SegmentCopies copies) {
        this.allocator = allocator;
        this.codec = codec;
        this.copies = codec == null ? null : copies;
    }

    /** Number of events; also the id of the last one. */
    public int size() {
        return size;
    }

    /** Bytes of the frames held. */
    public long frameBytes() {
        return frameBytes;
    }

    /** Bytes of memory the segments hold (frames plus slack, direct memory). */
    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes of the per-event index's pages (pooled direct memory). */
    public long indexBytes() {
        return indexBytes;
    }

    /** Everything this log (and its run) holds, for the memory budget: segments, index and fixed overheads. */
    public long heldBytes() {
        if (released) {
            return 0;
        }
        return capacityBytes + indexBytes + pageTableBytes + segmentCount * SEGMENT_OVERHEAD_BYTES
                + RUN_OVERHEAD_BYTES;
    }

    /**
     * What {@link #heldBytes()} will be right after appending a frame of {@code frameLength} bytes, before any
     * packing gives memory back: the new segment and index page it may need are included.
     */
    public long heldBytesAfterAppend(int frameLength) {
        long after = heldBytes();
        if (tailWritableBytes() < frameLength) {
            after += Math.max(SEGMENT_BYTES, frameLength) + SEGMENT_OVERHEAD_BYTES;
        }
        after += indexGrowthBytes();
        return after;
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
        if (released) {
            throw new IllegalStateException("log released");
        }
        if (index == null) {
            throw new IllegalStateException("log sealed"); // a packed log's seal freed its index
        }
        int jsonLength = json.readableBytes();
        long taken = 0;
        ByteBuf tail = segmentCount == 0 ? null : segments[segmentCount - 1];
        if (tail == null || packedLength[segmentCount - 1] != 0 || tail.writableBytes() < frameLength) {
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
        growIndex();
        setEnd(size, tail.writerIndex());
        size++;
        frameBytes += frameLength;
        return taken;
    }

    /** Bytes the index takes to hold one more event (a new page, or the first page's doubling). */
    private long indexGrowthBytes() {
        if (index == null) {
            return 0; // sealed: nothing is appended
        }
        int page = size / INDEX_PAGE_EVENTS;
        int slot = size % INDEX_PAGE_EVENTS;
        ByteBuf p = page < index.length ? index[page] : null;
        if (p != null && 4 * slot < p.capacity()) {
            return 0;
        }
        if (p == null) {
            long pageBytes = 4L * (page == 0 ? FIRST_PAGE_EVENTS : INDEX_PAGE_EVENTS);
            // the page table's slots (8 B each, on the heap) double with it
            return pageBytes + (page >= index.length ? 8L * index.length : 0);
        }
        return p.capacity(); // first page doubling: the new page is twice the old
    }

    private void growIndex() {
        if (indexGrowthBytes() == 0) {
            return;
        }
        int page = size / INDEX_PAGE_EVENTS;
        if (page >= index.length) {
            pageTableBytes += 8L * index.length;
            index = Arrays.copyOf(index, index.length * 2);
        }
        ByteBuf old = index[page];
        int events = old == null ? (page == 0 ? FIRST_PAGE_EVENTS : INDEX_PAGE_EVENTS)
                : Math.min(INDEX_PAGE_EVENTS, old.capacity() / 2);
        ByteBuf next = allocator.directBuffer(4 * events, 4 * events);
        next.writerIndex(next.capacity());
        if (old != null) {
            next.setBytes(0, old, 0, old.capacity());
            indexBytes -= old.capacity();
            old.release();
        }
        index[page] = next;
        indexBytes += next.capacity();
    }

    /** Frees the index: no event is appended after a seal, and reads find frame ends in the bytes. */
    private void dropIndex() {
        if (index == null) {
            return;
        }
        for (int p = 0; p < index.length && index[p] != null; p++) {
            index[p].release();
        }
        index = null;
        indexBytes = 0;
        pageTableBytes = 0;
    }

    /**
     * Offset just after the {@code frames}-th frame (1 or more) that starts at {@code from} in {@code bytes} (a
     * segment's frames): the index's entry, found by counting frame ends. Frames hold no other {@code \n\n}.
     */
    static int frameEndAfter(ByteBuf bytes, int from, int frames) {
        int at = from;
        int limit = bytes.writerIndex();
        for (int left = frames; ; ) {
            int lf = bytes.indexOf(at, limit, (byte) '\n');
            if (lf < 0 || lf + 1 >= limit) {
                throw new IllegalStateException("frame " + frames + " after offset " + from + " not found");
            }
            if (bytes.getByte(lf + 1) == '\n') {
                at = lf + 2;
                if (--left == 0) {
                    return at;
                }
            } else {
                at = lf + 1;
            }
        }
    }

    /** End offset (in its segment) of the frame of event index {@code i} (0-based). */
    private int endOf(int i) {
        return index[i / INDEX_PAGE_EVENTS].getInt(4 * (i % INDEX_PAGE_EVENTS));
    }

    private void setEnd(int i, int end) {
        index[i / INDEX_PAGE_EVENTS].setInt(4 * (i % INDEX_PAGE_EVENTS), end);
    }

    /** The segment holding event index {@code i} (0-based, in range). */
    private int segmentOf(int i) {
        int lo = 0;
        int hi = segmentCount - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (segmentFirstEvent[mid] <= i) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private long newSegment(int capacity) {
        if (segmentCount > 0) {
            pack(segmentCount - 1, true);
        }
        if (segmentCount == segments.length) {
            int n = segmentCount * 2;
            segments = Arrays.copyOf(segments, n);
            segmentFirstEvent = Arrays.copyOf(segmentFirstEvent, n);
            packedLength = Arrays.copyOf(packedLength, n);
            if (unpacked != null) {
                unpacked = Arrays.copyOf(unpacked, n);
            }
        }
        ByteBuf seg = allocator.directBuffer(capacity, capacity);
        segments[segmentCount] = seg;
        segmentFirstEvent[segmentCount] = size;
        segmentCount++;
        capacityBytes += seg.capacity();
        return seg.capacity();
    }

    /**
     * Packs segment {@code k} when a codec is set and packing saves memory; with {@code linger} (a live run's
     * newest full segment), its plain bytes stay on as the segment's lingering shared copy when the copies take
     * them ({@link SegmentCopies#adopt}), replacing the previous one.
     */
    private void pack(int k, boolean linger) {
        ByteBuf plain = segments[k];
        if (codec == null || packedLength[k] != 0 || plain.writerIndex() == 0) {
            return;
        }
        int length = plain.writerIndex();
        ByteBuf packed = codec.pack(plain, length);
        long packedBytes = allocatedBytes(packed);
        if (packedBytes >= plain.capacity()) {
            packed.release();
            return;
        }
        freedBytes += plain.capacity() - packedBytes;
        capacityBytes -= plain.capacity() - packedBytes;
        segments[k] = packed;
        packedLength[k] = length;
        if (linger && copies != null) {
            if (copiesHeld > 0) {
                copies.dropIdle(this);
            }
            if (copies.adopt(this, k, plain)) {
                if (unpacked == null) {
                    unpacked = new ByteBuf[segments.length];
                }
                unpacked[k] = plain;
                copiesHeld++;
                return;
            }
        }
        plain.release();
    }

    /** Bytes given back by packing since the last call. */
    public long takeFreedBytes() {
        long f = freedBytes;
        freedBytes = 0;
        return f;
    }

    /**
     * Seals the log after its last event: with a codec, packs the tail segment too; without, copies every frame
     * into one buffer of exactly their size and frees the segments. Returns the change in {@link #heldBytes()}
     * (negative: memory given back).
     */
    public long seal() {
        if (released) {
            return 0;
        }
        long before = heldBytes();
        if (codec != null) {
            if (segmentCount > 0) {
                pack(segmentCount - 1, false);
                freedBytes = 0;
            }
            if (copiesHeld > 0) {
                copies.dropIdle(this); // an ended run at rest holds its packed bytes only
            }
            dropIndex();
            return heldBytes() - before;
        }
        if (segmentCount <= 1 && (segmentCount == 0 || segments[0].writableBytes() == 0)) {
            return 0;
        }
        if (frameBytes > Integer.MAX_VALUE) {
            return 0; // cannot be one buffer; keep the segments (max-run-bytes forbids this anyway)
        }
        ByteBuf whole = allocator.directBuffer((int) frameBytes);
        int base = 0;
        for (int s = 0; s < segmentCount; s++) {
            ByteBuf seg = segments[s];
            int first = segmentFirstEvent[s];
            int last = s + 1 < segmentCount ? segmentFirstEvent[s + 1] : size;
            for (int i = first; i < last; i++) {
                setEnd(i, base + endOf(i));
            }
            base += seg.writerIndex();
            whole.writeBytes(seg, 0, seg.writerIndex());
            seg.release();
            segments[s] = null;
        }
        segments[0] = whole;
        segmentFirstEvent[0] = 0;
        segmentCount = 1;
        capacityBytes = allocatedBytes(whole);
        return heldBytes() - before;
    }

    /**
     * The frames from event id {@code fromId} up to the end of that event's segment, as a retained slice the
     * caller must write or release. Ids below 1 read from the first event. Returns {@link #NOTHING} (empty, no
     * release needed) when {@code fromId} is past the last event or the log is released, and {@code null} when the
     * segment is packed and the memory budget cannot take its unpacked copy now (try again later).
     */
    public ByteBuf readFrom(long fromId) {
        return readFrom(fromId, size);
    }

    /**
     * As {@link #readFrom(long)}, but never past event {@code toId}: a read that ends at a tail fixed earlier
     * ({@code ?live=false}). {@link #NOTHING} when {@code fromId > toId}.
     */
    public ByteBuf readFrom(long fromId, long toId) {
        long from = Math.max(fromId, 1);
        if (released || from > size || from > toId) {
            return NOTHING;
        }
        int i = (int) (from - 1);
        int seg = segmentOf(i);
        int first = segmentFirstEvent[seg];
        int segmentLast = lastOf(seg);
        int last = toId - 1 < segmentLast ? (int) (toId - 1) : segmentLast;
        boolean ownCopy = packedLength[seg] != 0 && copies == null;
        ByteBuf bytes = packedLength[seg] == 0 ? segments[seg] : copyOf(seg);
        if (bytes == null) {
            return null;
        }
        int start;
        int end;
        if (index != null) {
            start = i == first ? 0 : endOf(i - 1);
            end = endOf(last);
        } else { // sealed and packed: the frame ends are counted in the segment's bytes
            start = i == first ? 0 : frameEndAfter(bytes, 0, i - first);
            end = last == segmentLast ? bytes.writerIndex() : frameEndAfter(bytes, start, last - i + 1);
        }
        ByteBuf slice = bytes.retainedSlice(start, end - start);
        if (ownCopy) {
            bytes.release();
        }
        return slice;
    }

    /** Index of the last event of segment {@code seg}. */
    private int lastOf(int seg) {
        return seg + 1 < segmentCount ? segmentFirstEvent[seg + 1] - 1 : size - 1;
    }

    /**
     * The unpacked bytes of packed segment {@code seg}: its shared copy (made now, and counted, if there is none),
     * or, without shared copies, a copy of the caller's own to release; null when the budget cannot take it.
     */
    private ByteBuf copyOf(int seg) {
        if (copies == null) {
            return codec.unpack(segments[seg], packedLength[seg]);
        }
        if (unpacked == null) {
            unpacked = new ByteBuf[segments.length];
        }
        ByteBuf copy = unpacked[seg];
        if (copy == null) {
            copy = copies.unpack(this, seg, codec, segments[seg], packedLength[seg]);
            if (copy == null) {
                return null;
            }
            unpacked[seg] = copy;
            copiesHeld++;
        }
        return copy;
    }

    /**
     * The id of the last event {@link #readFrom(long)} returns for {@code fromId}; when it returns nothing, the id
     * just before {@code fromId} (ids below 1 count as 1; the cursor does not move, and nothing overflows).
     */
    public long lastIdInSegmentOf(long fromId) {
        long from = Math.max(fromId, 1);
        if (released || from > size) {
            return from - 1;
        }
        int i = (int) (from - 1);
        return lastOf(segmentOf(i)) + 1;
    }

    /** Number of shared unpacked copies this log holds now. */
    public int unpackedCopies() {
        return copiesHeld;
    }

    /** Called by {@link SegmentCopies} when it frees the copy of segment {@code k}. */
    void copyDropped(int k) {
        if (unpacked != null && unpacked[k] != null) {
            unpacked[k] = null;
            copiesHeld--;
        }
    }

    /** Frees the segments (and hands back its unpacked copies). Returns the bytes given back. Idempotent. */
    public long release() {
        if (released) {
            return 0;
        }
        long freed = heldBytes();
        if (copiesHeld > 0) {
            copies.dropAll(this);
        }
        released = true;
        for (int i = 0; i < segmentCount; i++) {
            segments[i].release();
            segments[i] = null;
        }
        segmentCount = 0;
        dropIndex();
        capacityBytes = 0;
        return freed;
    }

    public boolean isReleased() {
        return released;
    }

    /**
     * The bytes {@code buf} really takes from its pool: a pooled buffer is cut from a size class (up to a quarter
     * above what was asked for small sizes, a page for large ones), which {@link ByteBuf#maxFastWritableBytes} shows
     * when the buffer was allocated without a maximum capacity; an unpooled one, its capacity.
     */
    static long allocatedBytes(ByteBuf buf) {
        return buf.capacity() + Math.max(0, buf.maxFastWritableBytes() - buf.writableBytes());
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
