package io.iqstream.server.ingest;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * The bytes of one event (or line) that a splitter must hold because the event spans body chunks: a pooled direct
 * buffer from the connection's allocator, capped at the event size, and charged to the {@link MemoryBudget} by its
 * capacity for as long as it is held. Up to {@link #KEEP_BYTES} it is charged like an ordinary run's growth (it may
 * use the budget's headroom); past that only within the budget proper.
 *
 * <p>Confined to the publishing connection's event loop. When an append would pass the cap it returns
 * {@link Outcome#OVER_CAP}; when the budget cannot take the growth it returns {@link Outcome#OVER_BUDGET}; in both
 * cases nothing is written. {@link #clear()} after each complete event gives back everything but a small buffer
 * (at most {@link #KEEP_BYTES}, still charged) kept for the next event; {@link #release()} gives back all.
 */
final class PartialEventBuffer {
    /** What an append did. */
    enum Outcome {
        OK,
        OVER_CAP,
        OVER_BUDGET
    }

    /** A buffer this small is kept (and stays charged) between events, so streaming small events allocates nothing. */
    static final int KEEP_BYTES = 4096;
    private static final int MIN_BYTES = 256;
    /**
     * The run size passed to {@link MemoryBudget#charge} for a buffer past {@link #KEEP_BYTES}: far above any run,
     * so large partial events may fill the budget but never the headroom kept for ordinary runs to finish.
     */
    private static final long NOT_A_RUN = Long.MAX_VALUE;
    /**
     * The run size passed for a buffer of at most {@link #KEEP_BYTES}: an ordinary run's, so that holding an
     * ordinary event split across two reads may use the headroom as the run's own segments may. A publisher reaches
     * this only after its run was admitted; without it a flood that fills the budget would refuse an admitted
     * answer whenever TCP happened to split one of its small events.
     */
    private static final long ORDINARY_RUN = 0;

    private final ByteBufAllocator allocator;
    private final MemoryBudget budget;
    private final int capBytes;
    private ByteBuf buf;
    private long chargedBytes;

    /** A buffer of at most {@code capBytes}; {@code budget} null means not charged (tests, tools). */
    PartialEventBuffer(ByteBufAllocator allocator, MemoryBudget budget, int capBytes) {
        this.allocator = allocator;
        this.budget = budget;
        this.capBytes = capBytes;
    }

    int capBytes() {
        return capBytes;
    }

    int readableBytes() {
        return buf == null ? 0 : buf.readableBytes();
    }

    /** Bytes charged to the budget now (the buffer's capacity). */
    long chargedBytes() {
        return chargedBytes;
    }

    /** The bytes held; valid until the next append, clear or release. */
    ByteBuf content() {
        return buf == null ? Unpooled.EMPTY_BUFFER : buf;
    }

    /** The last byte held, or -1 when empty. */
    int lastByte() {
        return buf == null || !buf.isReadable() ? -1 : buf.getByte(buf.writerIndex() - 1) & 0xFF;
    }

    /** Drops the last {@code n} bytes held. */
    void dropLast(int n) {
        buf.writerIndex(buf.writerIndex() - n);
    }

    Outcome append(ByteBuf src, int index, int length) {
        Outcome o = ensure(length);
        if (o == Outcome.OK && length > 0) {
            buf.writeBytes(src, index, length);
        }
        return o;
    }

    Outcome append(byte[] src, int index, int length) {
        Outcome o = ensure(length);
        if (o == Outcome.OK && length > 0) {
            buf.writeBytes(src, index, length);
        }
        return o;
    }

    Outcome appendByte(int b) {
        Outcome o = ensure(1);
        if (o == Outcome.OK) {
            buf.writeByte(b);
        }
        return o;
    }

    private Outcome ensure(int length) {
        int held = readableBytes();
        if ((long) held + length > capBytes) {
            return Outcome.OVER_CAP;
        }
        int need = held + length;
        int capacity = buf == null ? 0 : buf.capacity();
        if (need <= capacity) {
            return Outcome.OK;
        }
        int next = (int) Math.min(capBytes, Math.max(need, Math.max(MIN_BYTES, 2L * capacity)));
        long more = next - capacity;
        if (budget != null && !budget.charge(more, next <= KEEP_BYTES ? ORDINARY_RUN : NOT_A_RUN)) {
            return Outcome.OVER_BUDGET;
        }
        chargedBytes += more;
        if (buf == null) {
            buf = allocator.directBuffer(next, capBytes);
        } else {
            buf.capacity(next);
        }
        return Outcome.OK;
    }

    /** The event is complete: its bytes are no longer held (a small buffer is kept for the next one). */
    void clear() {
        if (buf == null) {
            return;
        }
        if (buf.capacity() > KEEP_BYTES) {
            release();
        } else {
            buf.clear();
        }
    }

    /** Frees the buffer and gives its charge back. Idempotent. */
    void release() {
        if (buf != null) {
            buf.release();
            buf = null;
        }
        if (chargedBytes > 0) {
            if (budget != null) {
                budget.release(chargedBytes);
            }
            chargedBytes = 0;
        }
    }
}
