package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * Splits a byte stream into lines ending in LF (a CR before it is dropped). A complete line inside one chunk is
 * handed out as a slice of that chunk (no copy); only a line that spans chunks is gathered in a
 * {@link PartialEventBuffer} (pooled, capped, charged to the budget), so an endless line cannot take memory.
 * Confined to one connection's loop.
 */
final class LineReader {
    /** Receives lines; returns false to stop. */
    interface LineSink {
        /** The line's bytes are {@code line}'s readable bytes, valid only during the call; keep its indexes. */
        boolean onLine(ByteBuf line);
    }

    private final PartialEventBuffer partial;
    private PartialEventBuffer.Outcome failure;

    LineReader(PartialEventBuffer partial) {
        this.partial = partial;
    }

    /** Why the last feed stopped when it was not the sink: {@code OVER_CAP}, {@code OVER_BUDGET}, or null. */
    PartialEventBuffer.Outcome failure() {
        return failure;
    }

    int heldBytes() {
        return partial.readableBytes();
    }

    boolean feed(ByteBuf chunk, LineSink sink) {
        int from = chunk.readerIndex();
        int end = chunk.writerIndex();
        while (from < end) {
            int lf = chunk.forEachByte(from, end - from, ByteProcessor.FIND_LF);
            if (lf < 0) {
                return hold(chunk, from, end - from);
            }
            boolean go;
            if (partial.readableBytes() > 0) {
                if (!hold(chunk, from, lf - from)) {
                    return false;
                }
                go = sink.onLine(stripCr(partial.content()));
            } else {
                int lineEnd = lf > from && chunk.getByte(lf - 1) == '\r' ? lf - 1 : lf;
                go = ChunkWindow.onLine(sink, chunk, from, lineEnd - from);
            }
            from = lf + 1;
            partial.clear();
            if (!go) {
                return false;
            }
        }
        return true;
    }

    /** The body ended: a last line without LF, if any. */
    boolean finish(LineSink sink) {
        if (partial.readableBytes() > 0) {
            boolean go = sink.onLine(stripCr(partial.content()));
            partial.clear();
            return go;
        }
        return true;
    }

    private boolean hold(ByteBuf chunk, int from, int length) {
        PartialEventBuffer.Outcome o = partial.append(chunk, from, length);
        if (o != PartialEventBuffer.Outcome.OK) {
            failure = o;
            return false;
        }
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
        partial.release();
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
