package io.iqstream.server.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One durable stream: its configuration (content type, TTL or expiry), its messages (byte-exact, contiguous
 * in pooled segments charged to the memory budget: {@link StreamBytes}), closure, the idempotent producers' state, its fork parent and the live
 * readers waiting at its tail.
 *
 * <p>Mutated only on the stream's owner worker (the path's hash, as for runs). A fork on another worker reads the
 * messages below its fork point, which never change once written ({@link StreamBytes} publishes them so that
 * such a read sees whole messages only). {@link #forks} and
 * {@link #softDeleted} are shared with forks' workers too.
 */
public final class DurableStream {
    /** One producer's last accepted (epoch, sequence). */
    static final class Producer {
        long epoch;
        long lastSeq;
        long updatedMs;
    }

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
    /** Where in the parent's bytes the fork begins (its first own position). */
    final long forkPosition;
    /** Stream-Fork-Sub-Offset as created (0 for none). */
    final long forkSubOffset;
    final boolean createdClosed;

    long lastAccessMs;
    /** The last Stream-Seq accepted, or null. */
    String lastSeq;
    final Map<String, Producer> producers = new HashMap<>(2);
    /** The producer (id, epoch, seq) whose append closed the stream, or null. */
    String closedById;
    long closedByEpoch;
    long closedBySeq;
    /** Bytes charged to the memory budget for this stream's messages. */
    long chargedBytes;
    /** Live readers waiting at the tail (long-poll and SSE), on the owner worker. */
    final List<TailWaiter> waiters = new ArrayList<>(1);

    /** The stream's own bytes and message boundaries (a fork's below its fork point are its parent's). */
    private final StreamBytes bytes;
    private volatile boolean closed;
    /** Deleted while forks still read it: 410 to every request, its bytes kept for the forks. */
    volatile boolean softDeleted;
    /** Forks holding this stream's bytes; -1 once it is freed (no fork can be made of it then). */
    final AtomicInteger forks = new AtomicInteger();

    DurableStream(String path, String contentType, long ttlSeconds, String expiresAt, long expiresAtMs,
            DurableStream parent, long forkPosition, long forkSubOffset, boolean createdClosed, long nowMs) {
        this.path = path;
        this.contentType = contentType;
        this.json = DurableStreamProtocol.isJson(contentType);
        this.ttlSeconds = ttlSeconds;
        this.expiresAt = expiresAt;
        this.expiresAtMs = expiresAtMs;
        this.parent = parent;
        this.forkPosition = forkPosition;
        this.forkSubOffset = forkSubOffset;
        this.createdClosed = createdClosed;
        this.bytes = new StreamBytes(forkPosition);
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
        return bytes.tail();
    }

    public boolean isClosed() {
        return closed;
    }

    void close() {
        closed = true;
    }

    /** Whether the stream has expired at {@code nowMs} (its Expires-At passed, or its TTL since the last access). */
    boolean isExpired(long nowMs) {
        return expiresAt != null && nowMs >= expiresAtMs
                || ttlSeconds >= 0 && nowMs >= lastAccessMs + ttlSeconds * 1000;
    }

    /** What storing a message of {@code length} bytes takes from the memory budget ({@link StreamBytes#chargeFor}). */
    long chargeFor(int length) {
        return bytes.chargeFor(length);
    }

    /** Copies {@code message}'s bytes in as the next message (the caller keeps its buffer); on the owner worker. */
    void append(ByteBufAllocator alloc, ByteBuf message) {
        bytes.append(alloc, message);
    }

    /** Own messages held (not counting a parent's). */
    int ownCount() {
        return bytes.count();
    }

    /** Own bytes held (not counting a parent's). */
    long ownBytes() {
        return bytes.tail() - forkPosition;
    }

    /**
     * Gathers the messages after byte position {@code after} and at most at {@code upTo} (a fork's cap on its
     * parent), the parent's first, into {@code out}, until it holds {@code maxBytes} (at least one message). The
     * batch holds slices of the segments, not retained.
     */
    void collect(long after, long upTo, MessageBatch out, long maxBytes) {
        if (parent != null && after < forkPosition) {
            parent.collect(after, Math.min(upTo, forkPosition), out, maxBytes);
            if (out.bytes() >= maxBytes && !out.isEmpty()) {
                return;
            }
        }
        int n = bytes.count();
        for (int i = bytes.firstAfter(after); i < n && bytes.end(i) <= upTo; i++) {
            if (out.bytes() >= maxBytes && !out.isEmpty()) {
                return;
            }
            out.add(bytes.message(i), bytes.end(i));
        }
    }

    /** The first message after byte position {@code after}, with its end, or null (the sub-offset of a fork). */
    ByteBuf firstAfter(long after, long[] endOut) {
        if (parent != null && after < forkPosition) {
            ByteBuf b = parent.firstAfter(after, endOut);
            if (b != null && endOut[0] <= forkPosition) {
                return b;
            }
        }
        int i = bytes.firstAfter(after);
        if (i >= bytes.count()) {
            return null;
        }
        endOut[0] = bytes.end(i);
        return bytes.message(i);
    }

    /** Releases the stream's segments; once, when the stream is freed. Returns the message bytes they held. */
    long releaseMessages() {
        return bytes.release();
    }

    /** Forgets the producer least recently active (the producers' table is full). */
    void forgetOldestProducer() {
        String oldest = null;
        long at = Long.MAX_VALUE;
        for (Map.Entry<String, Producer> e : producers.entrySet()) {
            if (e.getValue().updatedMs < at) {
                at = e.getValue().updatedMs;
                oldest = e.getKey();
            }
        }
        producers.remove(oldest);
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
