package io.iqstream.server.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Writes a slice of a run's log as one HTTP/1.1 chunk straight to the transport, below the HTTP encoder: the size
 * line and the CRLF after the data are retained slices of a small pooled buffer this loop fills and renews, the
 * data is the log's own slice. So a chunk costs no object at steady state (Netty recycles pooled slices and
 * outbound entries), where the encoder built a {@code DefaultHttpContent}, a size buffer and two wrappers of its
 * CRLF per write. One per event loop thread ({@link #of}); confined to it. When the buffer has no room for the
 * next chunk's framing it takes a new one; the slices already written keep the old one alive until sent.
 */
final class ChunkFramer {
    private static final int BUFFER_BYTES = 1024;
    /** Most framing bytes a chunk takes: 8 hex digits, CRLF, CRLF. */
    private static final int MAX_FRAMING_BYTES = 12;
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
    static ChunkFramer of() {
        return FRAMERS.get();
    }

    /**
     * Writes {@code data} (readable bytes, at least one; the write takes its reference) as one chunk through
     * {@code below}, the context of the HTTP codec, with void promises. Does not flush.
     */
    void write(ChannelHandlerContext below, ByteBuf data) {
        int length = data.readableBytes();
        if (length == 0) {
            data.release(); // an empty chunk would end the body
            return;
        }
        ByteBuf b = buffer;
        if (b == null || b.writableBytes() < MAX_FRAMING_BYTES) {
            b = renew(below.alloc());
        }
        int start = b.writerIndex();
        for (int shift = (31 - Integer.numberOfLeadingZeros(length)) & ~3; shift >= 0; shift -= 4) {
            b.writeByte(HEX[(length >>> shift) & 0xF]);
        }
        b.writeShort(CRLF);
        int sizeEnd = b.writerIndex();
        b.writeShort(CRLF);
        below.write(b.retainedSlice(start, sizeEnd - start), below.voidPromise());
        below.write(data, below.voidPromise());
        below.write(b.retainedSlice(sizeEnd, 2), below.voidPromise());
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
