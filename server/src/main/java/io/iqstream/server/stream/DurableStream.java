package io.iqstream.server.stream;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One durable stream: its configuration (content type, TTL or expiry), its messages (byte-exact, in pooled
 * buffers charged to the memory budget), closure, the idempotent producers' state, its fork parent and the live
 * readers waiting at its tail.
 *
 * <p>Mutated only on the stream's owner worker (the path's hash, as for runs). A fork on another worker reads the
 * messages below its fork point, which never change once written: the message table is published through
 * volatile fields (the table before the count), so such a read sees whole messages only. {@link #forks} and
 * {@link #softDeleted} are shared with forks' workers too.
 */
public final class DurableStream {
    /** One producer's last accepted (epoch, sequence). */
    static final class Producer {
        long epoch;
        long lastSeq;
        long updatedMs;
    }

    /** The message table: buffers and the byte position after each; replaced whole when it grows. */
    private static final class Table {
        final ByteBuf[] data;
        final long[] ends;

        Table(int capacity) {
            data = new ByteBuf[capacity];
            ends = new long[capacity];
        }
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

    private volatile Table table = new Table(4);
    private volatile int count;
    private volatile long tail;
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
        this.tail = forkPosition;
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
        return tail;
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

    /** Appends one message (its buffer now owned here); on the owner worker. */
    void append(ByteBuf data) {
        Table t = table;
        int n = count;
        if (n == t.data.length) {
            Table grown = new Table(n * 2);
            System.arraycopy(t.data, 0, grown.data, 0, n);
            System.arraycopy(t.ends, 0, grown.ends, 0, n);
            table = grown;
            t = grown;
        }
        long end = tail + data.readableBytes();
        t.data[n] = data;
        t.ends[n] = end;
        tail = end;
        count = n + 1;
    }

    /** Own messages held (not counting a parent's). */
    int ownCount() {
        return count;
    }

    /**
     * Collects the messages after byte position {@code after} and at most at {@code upTo} (a fork's cap on its
     * parent), the parent's first, into {@code out} (each buffer as held: the caller takes duplicates), until
     * {@code maxBytes} are collected (at least one message). Returns the bytes collected.
     */
    long collect(long after, long upTo, List<ByteBuf> out, List<Long> ends, long maxBytes) {
        long got = 0;
        if (parent != null && after < forkPosition) {
            got = parent.collect(after, Math.min(upTo, forkPosition), out, ends, maxBytes);
            if (got >= maxBytes && !out.isEmpty()) {
                return got;
            }
        }
        int n = count;
        Table t = table;
        int i = firstAfter(t.ends, n, after);
        for (; i < n && t.ends[i] <= upTo; i++) {
            if (got >= maxBytes && !out.isEmpty()) {
                break;
            }
            out.add(t.data[i]);
            ends.add(t.ends[i]);
            got += t.data[i].readableBytes();
        }
        return got;
    }

    /** The first message after byte position {@code after}, with its end, or null (the sub-offset of a fork). */
    ByteBuf firstAfter(long after, long[] endOut) {
        if (parent != null && after < forkPosition) {
            ByteBuf b = parent.firstAfter(after, endOut);
            if (b != null && endOut[0] <= forkPosition) {
                return b;
            }
        }
        int n = count;
        Table t = table;
        int i = firstAfter(t.ends, n, after);
        if (i >= n) {
            return null;
        }
        endOut[0] = t.ends[i];
        return t.data[i];
    }

    private static int firstAfter(long[] ends, int n, long after) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ends[mid] <= after) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Releases the messages' buffers; once, when the stream is freed. Returns the bytes they held. */
    long releaseMessages() {
        Table t = table;
        int n = count;
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            bytes += t.data[i].readableBytes();
            t.data[i].release();
            t.data[i] = null;
        }
        count = 0;
        return bytes;
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
