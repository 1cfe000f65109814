package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ByteProcessor;

/**
 * Splits a byte stream into lines ending in LF (a CR before it is dropped). A complete line inside one chunk is
 * handed out as a slice of that chunk (no copy); only a line that spans chunks is gathered in a buffer, which is
 * capped so an endless line cannot take memory. Confined to one connection's loop.
 */
final class LineReader {
    /** Receives lines; returns false to stop. */
    interface LineSink {
        boolean onLine(ByteBuf line);
    }

    private final int maxLineBytes;
    private ByteBuf partial;
    private boolean overflow;

    LineReader(int maxLineBytes) {
        this.maxLineBytes = maxLineBytes;
    }

    /** Whether the last feed stopped because a line passed the cap. */
    boolean overflowed() {
        return overflow;
    }

    boolean feed(ByteBuf chunk, LineSink sink) {
        int from = chunk.readerIndex();
        int end = chunk.writerIndex();
        while (from < end) {
            int lf = chunk.forEachByte(from, end - from, ByteProcessor.FIND_LF);
            if (lf < 0) {
                return keepPartial(chunk, from, end - from);
            }
            ByteBuf line;
            if (partial != null && partial.isReadable()) {
                if (!keepPartial(chunk, from, lf - from)) {
                    return false;
                }
                line = partial;
            } else {
                line = chunk.slice(from, lf - from);
            }
            from = lf + 1;
            boolean go = sink.onLine(stripCr(line));
            if (partial != null) {
                partial.clear();
            }
            if (!go) {
                return false;
            }
        }
        return true;
    }

    /** The body ended: a last line without LF, if any. */
    boolean finish(LineSink sink) {
        if (partial != null && partial.isReadable()) {
            boolean go = sink.onLine(stripCr(partial));
            partial.clear();
            return go;
        }
        return true;
    }

    private boolean keepPartial(ByteBuf chunk, int from, int length) {
        int held = partial == null ? 0 : partial.readableBytes();
        if (held + length > maxLineBytes) {
            overflow = true;
            return false;
        }
        if (length == 0) {
            return true;
        }
        if (partial == null) {
            partial = Unpooled.buffer(Math.min(maxLineBytes, Math.max(256, length * 2)), maxLineBytes);
        }
        partial.writeBytes(chunk, from, length);
        return true;
    }

    private static ByteBuf stripCr(ByteBuf line) {
        int n = line.readableBytes();
        if (n > 0 && line.getByte(line.readerIndex() + n - 1) == '\r') {
            return line.slice(line.readerIndex(), n - 1);
        }
        return line;
    }

    void release() {
        if (partial != null) {
            partial.release();
            partial = null;
        }
    }

    static boolean isBlank(ByteBuf line) {
        for (int i = line.readerIndex(), end = line.writerIndex(); i < end; i++) {
            byte b = line.getByte(i);
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }
}
