package io.iqstream.server.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@code retry: <ms>} line and blank line that opens every SSE stream, spread by {@code --retry-jitter}: the
 * browsers cut at once by a balancer's restart each wait their own interval, so they come back over the jitter
 * instead of all in the same millisecond (the reconnect storm, docs/OPERATIONS.md).
 *
 * <p>Implementation notes. The lines are encoded once at start, at most {@link #VARIANTS} of them evenly over
 * {@code [retry, retry + jitter]}; a stream gets a duplicate of one picked at random (no string building, copy or
 * allocation beyond the duplicate per stream: {@code RelayAllocationTest}). Direct buffers, unreleasable, freed
 * with this object: a stream's write (which releases what it wrote) leaves them whole.
 *
 * <p>Any thread: immutable after construction.
 */
public final class RetryLines {

    /** The most distinct intervals: with a 1 s jitter, steps of about 16 ms. */
    static final int VARIANTS = 64;

    private final ByteBuf[] lines;
    private final long[] retryMs;

    public RetryLines(long retryMs, long jitterMs) {
        int n = jitterMs <= 0 ? 1 : (int) Math.min(VARIANTS, jitterMs + 1);
        this.lines = new ByteBuf[n];
        this.retryMs = new long[n];
        for (int i = 0; i < n; i++) {
            long ms = n == 1 ? retryMs : retryMs + Math.round(jitterMs * (double) i / (n - 1));
            byte[] line = ("retry: " + ms + "\n\n").getBytes(StandardCharsets.US_ASCII);
            this.retryMs[i] = ms;
            this.lines[i] = Unpooled.unreleasableBuffer(
                    Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(line.length).put(line).flip())).asReadOnly();
        }
    }

    /** A stream's opening line: a duplicate of one of the lines, picked at random. */
    public ByteBuf next() {
        ByteBuf line = lines.length == 1 ? lines[0] : lines[ThreadLocalRandom.current().nextInt(lines.length)];
        return line.duplicate();
    }

    /** How many distinct intervals streams are given. */
    public int variants() {
        return lines.length;
    }

    /** The shortest and longest interval given, ms. */
    public long minRetryMs() {
        return retryMs[0];
    }

    public long maxRetryMs() {
        return retryMs[retryMs.length - 1];
    }
}
