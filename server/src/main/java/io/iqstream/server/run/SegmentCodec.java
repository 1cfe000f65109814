package io.iqstream.server.run;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * Packs full log segments with zlib (DEFLATE at its fastest level) and unpacks them for readers that resume into
 * them. One per worker: it keeps one Deflater and one Inflater (native zlib state) and is confined to the
 * worker's loop.
 *
 * <h2>Implementation notes</h2>
 * A run's frames are highly repetitive (the same keys, type names and message ids in every token event), so a
 * full 8 KiB segment packs to a fraction of its size. Packing happens once per segment, when the next one is
 * started or the run ends — never on the path from an event's arrival to its subscribers, who are written from
 * the unpacked tail segment. Only a reader resuming into an older segment pays an unpack (a reconnect, not the
 * steady state). The CPU this costs per event is part of what the benchmark's CPU-per-event figure measures.
 */
public final class SegmentCodec {
    private final Deflater deflater = new Deflater(Deflater.BEST_SPEED, true);
    private final Inflater inflater = new Inflater(true);
    private final ByteBufAllocator allocator;
    private ByteBuffer scratch = ByteBuffer.allocateDirect(16 * 1024);

    public SegmentCodec(ByteBufAllocator allocator) {
        this.allocator = allocator;
    }

    /**
     * Returns a new buffer of exactly the packed size holding {@code length} bytes of {@code segment}, allocated
     * without a maximum capacity so that the size class the pool cut it from shows ({@code RunLog.allocatedBytes}:
     * what the budget charges for it).
     */
    public ByteBuf pack(ByteBuf segment, int length) {
        int bound = length + length / 1000 + 64;
        if (scratch.capacity() < bound) {
            scratch = ByteBuffer.allocateDirect(Math.max(bound, scratch.capacity() * 2));
        }
        scratch.clear();
        deflater.reset();
        deflater.setInput(segment.nioBuffer(0, length));
        deflater.finish();
        while (!deflater.finished()) {
            if (deflater.deflate(scratch) == 0 && !scratch.hasRemaining()) {
                throw new IllegalStateException("deflate bound too small");
            }
        }
        scratch.flip();
        ByteBuf packed = allocator.directBuffer(scratch.remaining());
        packed.writeBytes(scratch);
        return packed;
    }

    /** Unpacks a segment packed by {@link #pack} into a new buffer of {@code length} bytes. */
    public ByteBuf unpack(ByteBuf packed, int length) {
        ByteBuf out = allocator.directBuffer(length, length);
        inflater.reset();
        inflater.setInput(packed.nioBuffer(0, packed.writerIndex()));
        ByteBuffer target = out.nioBuffer(0, length);
        try {
            while (target.hasRemaining() && !inflater.finished()) {
                if (inflater.inflate(target) == 0 && inflater.needsInput()) {
                    break;
                }
            }
        } catch (DataFormatException e) {
            out.release();
            throw new IllegalStateException("corrupt packed segment", e);
        }
        out.writerIndex(length - target.remaining());
        return out;
    }

    /** Frees the native zlib state. */
    public void close() {
        deflater.end();
        inflater.end();
    }
}
