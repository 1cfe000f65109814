package io.iqstream.server.stream;

import io.iqstream.server.run.ByteLog;
import io.iqstream.server.run.ProducerLedger;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One durable stream as the protocol sees it: its configuration (content type, TTL or expiry, fork source),
 * closure, its last {@code Stream-Seq}, soft deletion and the live readers waiting at its tail. Its bytes, message
 * boundaries and fork sharing are the run log layer's ({@link ByteLog}), and so is its idempotent producers' state
 * ({@link ProducerLedger}); this class holds one of each.
 *
 * <p>Mutated only on the stream's owner worker (the path's hash, as for runs). A fork on another worker reads the
 * messages below its fork point through its own log ({@link ByteLog} publishes them so that such a read sees whole
 * messages only) and holds them through {@link ByteLog#holdForFork}; {@link #softDeleted} is shared with forks'
 * workers too.
 */
public final class DurableStream {
    final String path;
    final String contentType;
    final boolean json;
    /** Sliding TTL in seconds, or -1. */
    final long ttlSeconds;
    /** Stream-Expires-At as given, or null. */
    final String expiresAt;
    final long expiresAtMs;
    /** The parent of a fork, or null. */
    final DurableStream parent;
    /** Stream-Fork-Sub-Offset as created (0 for none). */
    final long forkSubOffset;
    final boolean createdClosed;

    long lastAccessMs;
    /** The last Stream-Seq accepted, or null. */
    String lastSeq;
    /** Bytes charged to the memory budget for this stream's messages. */
    long chargedBytes;
    /** Heap charged for this stream's bookkeeping, its last Stream-Seq and its producers (MemoryBudget#tryChargeHeap). */
    long heapChargedBytes;
    /** Live readers waiting at the tail (long-poll and SSE), on the owner worker. */
    final List<TailWaiter> waiters = new ArrayList<>(1);

    /**
     * The stream's own bytes and message boundaries (a fork's below its fork point are its parent's). Replaced only
     * while no fork holds it: by an empty, retired log when the stream goes cold ({@link #cold}), and by the log
     * loaded from its file when it is needed again. Written on the owner; read by a fork's worker too.
     */
    volatile ByteLog log;
    /**
     * Its bytes are in its file only ({@code --cold-after}): every request loads them first
     * ({@link DurableStreams#load}). Set before the log is retired, so a fork's worker whose hold is refused sees
     * it and loads the source instead of answering 404.
     */
    volatile boolean cold;
    /**
     * The tail when the stream went cold: what loading its file must give back, and what a cold stream's
     * {@link #tail} is. Written on the owner before {@link #cold} is set.
     */
    volatile long coldTail;
    /**
     * Where a cold stream's messages lie in its file, for reads answered from the file ({@link ColdRead}): pairs
     * of a byte position of the stream and the file position of the record that starts there, one pair per
     * {@link ColdIndex#STRIDE_BYTES} of messages at most. Built by recovery for a stream that starts cold, else
     * by the first such read; null until then, and again once the stream is loaded (owner).
     */
    long[] coldIndex;
    /** Requests waiting for the stream's file to be loaded, or null when no load is under way (owner). */
    List<Consumer<DurableStreams.Load>> loading;
    /** Live reads (long-poll or SSE) of this stream going on (owner): a stream read live never goes cold. */
    int liveReads;
    /** The idempotent producers' epochs and sequence numbers, and the closing append. */
    final ProducerLedger producers = new ProducerLedger();
    private volatile boolean closed;
    /** Closed to writers: set when a closing append is taken, before it is durable and {@link #closed} (owner). */
    private boolean writesClosed;
    /** Records queued for the disk and not yet written, barriers included (owner; 0 in memory mode). */
    int pendingWrites;
    /** Why the stream's file refused a write; from then on it takes no write until a restart (owner). */
    java.io.IOException storageFailure;
    /** Deleted while forks still read it: 410 to every request, its bytes kept for the forks. */
    volatile boolean softDeleted;

    DurableStream(String path, String contentType, long ttlSeconds, String expiresAt, long expiresAtMs,
            DurableStream parent, long forkPosition, long forkSubOffset, boolean createdClosed, long nowMs,
            ByteBufAllocator alloc) {
        this.path = path;
        this.contentType = contentType;
        this.json = DurableStreamProtocol.isJson(contentType);
        this.ttlSeconds = ttlSeconds;
        this.expiresAt = expiresAt;
        this.expiresAtMs = expiresAtMs;
        this.parent = parent;
        this.forkSubOffset = forkSubOffset;
        this.createdClosed = createdClosed;
        this.log = parent == null ? new ByteLog(alloc) : new ByteLog(alloc, parent.log, forkPosition);
        this.lastAccessMs = nowMs;
    }

    /** A waiter at a stream's tail: told when messages arrive, the stream closes, or it goes away. */
    interface TailWaiter {
        void wake();
    }

    public String path() {
        return path;
    }

    /** The byte position after the last message: the offset a reader at the tail has. */
    public long tail() {
        return cold ? coldTail : log.tail();
    }

    /** Whether readers see the stream closed. */
    public boolean isClosed() {
        return closed;
    }

    /** Whether the stream takes no more appends (its closing append may still be on its way to the disk). */
    boolean writesClosed() {
        return writesClosed;
    }

    /** Takes no more appends from now on (owner). */
    void closeForWrites() {
        writesClosed = true;
    }

    /** Readers see the stream closed (once its closing append is durable). */
    void close() {
        writesClosed = true;
        closed = true;
    }

    /** The position after the last message taken, durable or not: what a writer's answer names. */
    long appendedTail() {
        return log.appendedTail();
    }

    /** Whether the stream has expired at {@code nowMs} (its Expires-At passed, or its TTL since the last access). */
    boolean isExpired(long nowMs) {
        return expiresAt != null && nowMs >= expiresAtMs
                || ttlSeconds >= 0 && nowMs - lastAccessMs >= ttlMs(ttlSeconds);
    }

    /** A TTL in milliseconds, saturated: a TTL of more seconds than a long holds in milliseconds never ends. */
    static long ttlMs(long ttlSeconds) {
        return ttlSeconds > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : ttlSeconds * 1000;
    }

    /** Wakes every live reader at the tail (after an append, a closure, or the stream's end). */
    void wakeWaiters() {
        if (waiters.isEmpty()) {
            return;
        }
        TailWaiter[] now = waiters.toArray(new TailWaiter[0]);
        for (TailWaiter w : now) {
            w.wake();
        }
    }
}
