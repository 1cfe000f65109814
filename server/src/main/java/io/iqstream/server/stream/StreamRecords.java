package io.iqstream.server.stream;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What a durable stream writes to its file ({@code --durability disk}): the payloads of its records, one per change
 * it acknowledges, each framed and checksummed by the storage layer. A file is a stream's {@link Create} record,
 * then its {@link Append}s (a message, a closure, or both, with the producer and the {@code Stream-Seq} that wrote
 * it, so a producer's state is stored with the data it acknowledges, atomically), and a {@link #DELETE} when it was
 * deleted while forks still read it. Replaying them in order makes the stream again.
 *
 * <p>Big-endian numbers; a string is its UTF-8 length (4 bytes, -1 for none) and bytes. Stateless; any thread.
 */
final class StreamRecords {
    static final byte CREATE = 1;
    static final byte APPEND = 2;
    static final byte DELETE = 3;

    private static final int HAS_DATA = 1;
    private static final int CLOSES = 2;
    private static final int PRODUCER = 4;
    private static final int SEQ = 8;

    private StreamRecords() {}

    /** A stream's creation: its configuration, its fork source. */
    record Create(String path, String contentType, long ttlSeconds, String expiresAt, long expiresAtMs,
            String parentPath, long forkPosition, long forkSubOffset, boolean createdClosed) {}

    /** One acknowledged change: a message ({@code data}, may be null), a closure, the producer and seq behind it. */
    record Append(long timeMs, byte[] data, boolean closes, String producerId, long epoch, long seq,
            String streamSeq) {}

    static byte[] create(Create c) {
        ByteBuffer b = ByteBuffer.allocate(1 + 8 * 5 + 1 + size(c.path()) + size(c.contentType())
                + size(c.expiresAt()) + size(c.parentPath()));
        b.put(CREATE);
        put(b, c.path());
        put(b, c.contentType());
        b.putLong(c.ttlSeconds());
        put(b, c.expiresAt());
        b.putLong(c.expiresAtMs());
        put(b, c.parentPath());
        b.putLong(c.forkPosition());
        b.putLong(c.forkSubOffset());
        b.put((byte) (c.createdClosed() ? 1 : 0));
        return b.array();
    }

    static byte[] append(Append a) {
        int flags = (a.data() != null ? HAS_DATA : 0) | (a.closes() ? CLOSES : 0)
                | (a.producerId() != null ? PRODUCER : 0) | (a.streamSeq() != null ? SEQ : 0);
        int size = 1 + 8 + 1 + (a.producerId() != null ? size(a.producerId()) + 16 : 0)
                + (a.streamSeq() != null ? size(a.streamSeq()) : 0) + (a.data() != null ? 4 + a.data().length : 0);
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put(APPEND);
        b.putLong(a.timeMs());
        b.put((byte) flags);
        if (a.producerId() != null) {
            put(b, a.producerId());
            b.putLong(a.epoch());
            b.putLong(a.seq());
        }
        if (a.streamSeq() != null) {
            put(b, a.streamSeq());
        }
        if (a.data() != null) {
            b.putInt(a.data().length);
            b.put(a.data());
        }
        return b.array();
    }

    static byte[] delete() {
        return new byte[] {DELETE};
    }

    /** The record's kind: {@link #CREATE}, {@link #APPEND} or {@link #DELETE}; 0 for an empty payload. */
    static byte kind(ByteBuffer payload) {
        return payload.remaining() == 0 ? 0 : payload.get(payload.position());
    }

    /** A {@link #CREATE} record; null when malformed. */
    static Create readCreate(ByteBuffer p) {
        try {
            ByteBuffer b = p.duplicate();
            b.get();
            return new Create(string(b), string(b), b.getLong(), string(b), b.getLong(), string(b), b.getLong(),
                    b.getLong(), b.get() == 1);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            return null;
        }
    }

    /** An {@link #APPEND} record; null when malformed. */
    static Append readAppend(ByteBuffer p) {
        try {
            ByteBuffer b = p.duplicate();
            b.get();
            long time = b.getLong();
            int flags = b.get();
            String producer = null;
            long epoch = 0;
            long seq = 0;
            if ((flags & PRODUCER) != 0) {
                producer = string(b);
                epoch = b.getLong();
                seq = b.getLong();
            }
            String streamSeq = (flags & SEQ) != 0 ? string(b) : null;
            byte[] data = null;
            if ((flags & HAS_DATA) != 0) {
                int length = b.getInt();
                if (length < 0 || length > b.remaining()) {
                    return null;
                }
                data = new byte[length];
                b.get(data);
            }
            return new Append(time, data, (flags & CLOSES) != 0, producer, epoch, seq, streamSeq);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Where an {@link #APPEND} record's message lies in its payload, without copying it: its first byte (counted
     * from the payload's position) in the high 32 bits, its length in the low; -1 when the record has none.
     * IllegalArgumentException when the record is malformed. What a read of a cold stream's file uses.
     */
    static long messageOf(ByteBuffer p) {
        try {
            ByteBuffer b = p.duplicate();
            b.get();
            b.getLong();
            int flags = b.get();
            if ((flags & PRODUCER) != 0) {
                skipString(b);
                b.position(b.position() + 16);
            }
            if ((flags & SEQ) != 0) {
                skipString(b);
            }
            if ((flags & HAS_DATA) == 0) {
                return -1;
            }
            int length = b.getInt();
            if (length < 0 || length > b.remaining()) {
                throw new IllegalArgumentException("message length " + length);
            }
            return (long) (b.position() - p.position()) << 32 | length;
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new IllegalArgumentException("a malformed append record: " + e.getMessage(), e);
        }
    }

    /** The message of any record as {@link #messageOf} gives it; -1 for a record that is no append, or has none. */
    static long messageIn(ByteBuffer p) {
        return kind(p) == APPEND ? messageOf(p) : -1;
    }

    private static void skipString(ByteBuffer b) {
        int length = b.getInt();
        if (length < -1 || length > b.remaining()) {
            throw new IllegalArgumentException("string length " + length);
        }
        b.position(b.position() + Math.max(0, length));
    }

    private static int size(String s) {
        return 4 + (s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length);
    }

    private static void put(ByteBuffer b, String s) {
        if (s == null) {
            b.putInt(-1);
            return;
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        b.putInt(bytes.length);
        b.put(bytes);
    }

    private static String string(ByteBuffer b) {
        int length = b.getInt();
        if (length == -1) {
            return null;
        }
        if (length < 0 || length > b.remaining()) {
            throw new IllegalArgumentException("string length " + length);
        }
        byte[] bytes = new byte[length];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
