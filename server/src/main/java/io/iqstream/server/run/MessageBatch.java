package io.iqstream.server.run;

import io.netty.buffer.ByteBuf;

/**
 * Messages gathered from a {@link ByteLog} for one answer: each buffer as the log holds it (the answer takes
 * duplicates) and the byte position after it. Reused by a live read from one wake-up to the next, so a live
 * reader allocates no list per delivery.
 *
 * <p>Not thread-safe: one reader's, on its stream's worker.
 */
public final class MessageBatch {
    private ByteBuf[] data = new ByteBuf[8];
    private long[] ends = new long[8];
    private int size;
    private long bytes;

    void add(ByteBuf message, long end) {
        if (size == data.length) {
            data = java.util.Arrays.copyOf(data, size * 2);
            ends = java.util.Arrays.copyOf(ends, size * 2);
        }
        data[size] = message;
        ends[size] = end;
        size++;
        bytes += message.readableBytes();
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public ByteBuf data(int i) {
        return data[i];
    }

    public long end(int i) {
        return ends[i];
    }

    /** The position after the last message gathered (call only when not empty). */
    public long lastEnd() {
        return ends[size - 1];
    }

    /** Bytes of the messages gathered. */
    public long bytes() {
        return bytes;
    }

    /** Empties the batch (the buffers stay the stream's). */
    public void clear() {
        java.util.Arrays.fill(data, 0, size, null);
        size = 0;
        bytes = 0;
    }
}
