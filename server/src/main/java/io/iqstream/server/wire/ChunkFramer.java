package io.iqstream.server.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Writes a slice of a run's log as one HTTP/1.1 chunk straight to the transport, below the HTTP encoder, in one of
 * two ways:
 * <ul>
 *   <li>a small slice (at most {@link #COPY_BYTES}, a live event) to a connection with nothing waiting to be sent
 *       is copied, size line and CRLF around it, into one pooled buffer of its own size: the flush then hands the
 *       kernel one buffer, a {@code send}, where three went through {@code writev} (its VFS layer and iovec import
 *       cost about 1 µs per event on the development VM, and the three outbound entries more Java). A copy lives
 *       until the socket takes it; one with bytes still waiting gets no copy, so a stalled subscriber holds at most
 *       one, inside the direct memory the plan allows each connection ({@code MemoryPlan.CONNECTION_DIRECT_BYTES}:
 *       a subscriber decodes no request body);
 *   <li>anything else goes out as the log's own slice between a size line and a CRLF that are retained slices of
 *       a small pooled buffer this loop fills and renews (a replay, a large event, a subscriber behind).
 * </ul>
 * Either way a chunk costs no heap object at steady state (Netty recycles pooled buffers, slices and outbound
 * entries), where the encoder built a {@code DefaultHttpContent}, a size buffer and two wrappers of its CRLF per
 * write. Used by the AG-UI subscribers ({@link SubscriberStream}) and the Durable Streams SSE reads
 * ({@code stream.LiveRead}). One per event loop thread ({@link #of}); confined to it. When the buffer has no room for the next chunk's
 * framing it takes a new one; the slices already written keep the old one alive until sent.
 */
public final class ChunkFramer {
    private static final int BUFFER_BYTES = 1024;
    /** Most framing bytes a chunk takes: 8 hex digits, CRLF, CRLF. */
    private static final int MAX_FRAMING_BYTES = 12;
    /** The largest slice copied into one buffer with its framing. */
    static final int COPY_BYTES = 1024;
    private static final FastThreadLocal<ChunkFramer> FRAMERS = new FastThreadLocal<>() {
        @Override
        protected ChunkFramer initialValue() {
            return new ChunkFramer();
        }

        @Override
        protected void onRemoval(ChunkFramer framer) {
            framer.release();
        }
    };

    private ByteBuf buffer;

    private ChunkFramer() {
    }

    /** This thread's framer (an event loop's). */
    public static ChunkFramer of() {
        return FRAMERS.get();
    }

    /**
     * Writes {@code data} (readable bytes, at least one; the write takes its reference) as one chunk through
     * {@code below}, the context of the HTTP codec, with void promises. Does not flush.
     */
    public void write(ChannelHandlerContext below, ByteBuf data) {
        int length = data.readableBytes();
        if (length == 0) {
            data.release(); // an empty chunk would end the body
            return;
        }
        if (length <= COPY_BYTES && nothingWaiting(below)) {
            ByteBuf chunk = below.alloc().directBuffer(length + MAX_FRAMING_BYTES);
            writeSizeLine(chunk, length);
            chunk.writeBytes(data).writeShort(CRLF);
            data.release();
            below.write(chunk, below.voidPromise());
            return;
        }
        ByteBuf b = buffer;
        if (b == null || b.writableBytes() < MAX_FRAMING_BYTES) {
            b = renew(below.alloc());
        }
        int start = b.writerIndex();
        writeSizeLine(b, length);
        int sizeEnd = b.writerIndex();
        b.writeShort(CRLF);
        below.write(b.retainedSlice(start, sizeEnd - start), below.voidPromise());
        below.write(data, below.voidPromise());
        below.write(b.retainedSlice(sizeEnd, 2), below.voidPromise());
    }

    /** Whether the connection has no bytes written and not yet taken by its socket. */
    private static boolean nothingWaiting(ChannelHandlerContext ctx) {
        ChannelOutboundBuffer out = ctx.channel().unsafe().outboundBuffer();
        return out != null && out.totalPendingWriteBytes() == 0;
    }

    /** {@code length} in hex, then CRLF. */
    private static void writeSizeLine(ByteBuf b, int length) {
        for (int shift = (31 - Integer.numberOfLeadingZeros(length)) & ~3; shift >= 0; shift -= 4) {
            b.writeByte(HEX[(length >>> shift) & 0xF]);
        }
        b.writeShort(CRLF);
    }

    private ByteBuf renew(ByteBufAllocator allocator) {
        release();
        buffer = allocator.directBuffer(BUFFER_BYTES, BUFFER_BYTES);
        return buffer;
    }

    private void release() {
        if (buffer != null) {
            buffer.release();
            buffer = null;
        }
    }

    private static final short CRLF = ('\r' << 8) | '\n';
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
}
