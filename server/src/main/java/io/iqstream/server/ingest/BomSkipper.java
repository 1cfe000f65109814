package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Skips a UTF-8 byte order mark ({@code EF BB BF}) at the very start of a body, even one split across chunks, then
 * hands every byte to the format's splitter. A BOM is the encoding's mark, not part of the first event (browsers'
 * {@code JSON.parse} throws on it; an SSE field name would not match). Confined to the connection's loop.
 */
final class BomSkipper implements EventSplitter {
    private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

    private final EventSplitter format;
    private int matched;
    private boolean started;

    BomSkipper(EventSplitter format) {
        this.format = format;
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        if (started) {
            return format.feed(chunk, sink);
        }
        int at = chunk.readerIndex();
        int end = chunk.writerIndex();
        while (at < end && matched < BOM.length && chunk.getByte(at) == BOM[matched]) {
            matched++;
            at++;
        }
        if (matched == BOM.length) {
            started = true;
            return at == end || format.feed(chunk.slice(at, end - at), sink);
        }
        if (at == end) {
            return true; // all seen so far could still be a BOM
        }
        started = true;
        if (matched > 0 && !format.feed(Unpooled.wrappedBuffer(BOM, 0, matched), sink)) {
            return false;
        }
        return format.feed(chunk.slice(at, end - at), sink);
    }

    @Override
    public boolean finish(EventSink sink) {
        if (!started) {
            started = true;
            if (matched > 0 && matched < BOM.length && !format.feed(Unpooled.wrappedBuffer(BOM, 0, matched), sink)) {
                return false;
            }
        }
        return format.finish(sink);
    }

    @Override
    public boolean isSse() {
        return format.isSse();
    }

    @Override
    public int heldBytes() {
        return format.heldBytes();
    }

    @Override
    public void release() {
        format.release();
    }
}
