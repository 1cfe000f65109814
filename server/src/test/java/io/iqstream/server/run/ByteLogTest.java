package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A byte stream's log: messages of every size (within a segment, filling one, larger than one) read back byte-exact
 * from any boundary, a fork reads its parent's segments below the fork point (the same memory, not a copy) and its
 * own above it, the budget charge a message is given is exactly what its append holds, and a log held by a fork is
 * not retired until the fork lets go.
 */
class ByteLogTest {
    private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    private static void append(ByteLog log, String text) {
        ByteBuf b = Unpooled.copiedBuffer(text, StandardCharsets.ISO_8859_1);
        log.appendCommitted(b);
        b.release();
    }

    /** Every message after {@code after}, in batches of at most {@code maxBytes}, concatenated. */
    private static String readAll(ByteLog log, long after, long maxBytes) {
        StringBuilder out = new StringBuilder();
        MessageBatch batch = new MessageBatch();
        long at = after;
        while (true) {
            batch.clear();
            log.collect(at, batch, maxBytes);
            if (batch.isEmpty()) {
                return out.toString();
            }
            for (int i = 0; i < batch.size(); i++) {
                out.append(batch.data(i).toString(StandardCharsets.ISO_8859_1));
            }
            at = batch.lastEnd();
        }
    }

    private static List<String> randomMessages(int count, long seed) {
        Random random = new Random(seed);
        List<String> messages = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int size = i % 20 == 7 ? ByteLog.MAX_SEGMENT_BYTES + random.nextInt(30_000) : 1 + random.nextInt(900);
            StringBuilder m = new StringBuilder(size);
            for (int j = 0; j < size; j++) {
                m.append((char) random.nextInt(256)); // every byte value
            }
            messages.add(m.toString());
        }
        return messages;
    }

    @Test
    void readsBackByteExactFromEveryBoundaryAcrossSegments() {
        ByteLog log = new ByteLog(ALLOC);
        List<String> messages = randomMessages(160, 32);
        List<Long> ends = new ArrayList<>();
        long position = 0;
        for (String m : messages) {
            append(log, m);
            position += m.length();
            ends.add(position);
            assertEquals(position, log.tail(), "the tail is the byte position after the last message");
        }
        assertEquals(160, log.ownCount());
        assertEquals(position, log.ownBytes());
        assertEquals(String.join("", messages), readAll(log, 0, 64 * 1024), "every byte, in order");
        for (int k : new int[] {0, 6, 7, 8, 99, 158, 159}) {
            assertEquals(String.join("", messages.subList(k + 1, messages.size())), readAll(log, ends.get(k), 4096),
                    "read from the boundary after message " + k);
        }
        MessageBatch one = new MessageBatch();
        log.collect(ends.get(6), one, 1);
        assertEquals(1, one.size(), "a batch holds at least one message, even past its byte limit");
        assertEquals(messages.get(7), one.data(0).toString(StandardCharsets.ISO_8859_1));
        assertEquals(ends.get(7), one.end(0), "with the position after it");
        // a position inside a message reads from the message that ends after it
        long[] end = new long[1];
        ByteBuf first = log.firstAfter(ends.get(10) + 1, end);
        assertEquals(messages.get(11), first.toString(StandardCharsets.ISO_8859_1));
        assertEquals(ends.get(11), end[0]);
        assertNull(log.firstAfter(log.tail(), end), "nothing after the tail");
        assertEquals(position, log.release(), "release reports the message bytes it held");
        assertEquals(0, log.release(), "once");
        assertThrows(IllegalStateException.class, () -> append(log, "x"));
    }

    @Test
    void aForkReadsItsParentsSegmentsBelowTheForkPointWithoutCopyingThem() {
        ByteLog parent = new ByteLog(ALLOC);
        List<String> messages = randomMessages(60, 7);
        List<Long> ends = new ArrayList<>();
        for (String m : messages) {
            append(parent, m);
            ends.add(parent.tail());
        }
        long forkPoint = ends.get(40);
        assertTrue(parent.holdForFork());
        ByteLog fork = new ByteLog(ALLOC, parent, forkPoint);
        assertEquals(forkPoint, fork.tail(), "a fork starts at its fork point");
        assertEquals(0, fork.ownCount());
        assertEquals(0, fork.heldBytes(), "a fork holds nothing of its parent's");
        append(parent, "after the fork, the parent's");
        append(fork, "the fork's own");
        assertEquals(forkPoint + "the fork's own".length(), fork.tail());
        assertEquals("the fork's own".length(), fork.ownBytes(), "the fork holds only its own bytes");
        assertEquals(ByteLog.MIN_SEGMENT_BYTES + RunLog.SEGMENT_OVERHEAD_BYTES + ByteLog.INDEX_BYTES_PER_MESSAGE,
                fork.heldBytes(), "the fork's memory is its own message's segment");
        String below = String.join("", messages.subList(0, 41));
        assertEquals(below + "the fork's own", readAll(fork, 0, 64 * 1024));
        assertEquals(String.join("", messages.subList(20, 41)) + "the fork's own", readAll(fork, ends.get(19), 4096),
                "a fork read from a boundary of its parent's part");
        assertEquals(String.join("", messages) + "after the fork, the parent's", readAll(parent, 0, 64 * 1024));

        // the same memory: a message below the fork point read through the fork is a slice of the parent's segment
        MessageBatch viaFork = new MessageBatch();
        MessageBatch viaParent = new MessageBatch();
        fork.collect(ends.get(29), viaFork, 1);
        parent.collect(ends.get(29), viaParent, 1);
        ByteBuf parents = viaParent.data(0);
        byte was = parents.getByte(0);
        parents.setByte(0, was ^ 0x55); // a test's own write into the parent's segment, seen through the fork
        assertEquals((byte) (was ^ 0x55), viaFork.data(0).getByte(0), "the parent's segment, not a copy");
        parents.setByte(0, was);

        // the fork's first message after its fork point is its own, not the parent's later one
        long[] end = new long[1];
        assertEquals("the fork's own", fork.firstAfter(forkPoint, end).toString(StandardCharsets.ISO_8859_1));
        assertEquals(messages.get(40), fork.firstAfter(ends.get(39), end).toString(StandardCharsets.ISO_8859_1));
        assertEquals(forkPoint, end[0]);

        // held by the fork, the parent cannot be retired; once let go it can, and no fork can be made after
        assertFalse(parent.retireIfUnheld(), "a fork holds the parent's segments");
        assertTrue(parent.releaseFork(), "the last fork let go");
        assertTrue(parent.retireIfUnheld());
        assertFalse(parent.holdForFork(), "a retired log cannot be forked");
        fork.release();
        parent.release();
    }

    @Test
    void theChargeForAMessageIsWhatItsAppendHolds() {
        ByteLog log = new ByteLog(ALLOC);
        assertEquals(0, log.heldBytes());
        Random random = new Random(5);
        int segments = 0;
        for (int i = 0; i < 2000; i++) {
            int length = i % 97 == 3 ? 20_000 + random.nextInt(10_000) : i % 13 == 0 ? 0 : random.nextInt(300);
            long charge = log.chargeFor(length);
            long before = log.heldBytes();
            append(log, "y".repeat(length));
            assertEquals(before + charge, log.heldBytes(), "message " + i + " of " + length + " B");
            if (charge > ByteLog.INDEX_BYTES_PER_MESSAGE) {
                segments++;
                assertTrue(charge >= Math.max(length, ByteLog.MIN_SEGMENT_BYTES) + RunLog.SEGMENT_OVERHEAD_BYTES,
                        "a new segment is charged with its overhead: " + charge);
            }
        }
        long bytes = log.ownBytes();
        long held = log.heldBytes();
        // the bytes, their segments' room (at most one largest segment's per segment made), a boundary each
        assertTrue(held >= bytes + 2000 * ByteLog.INDEX_BYTES_PER_MESSAGE + segments * RunLog.SEGMENT_OVERHEAD_BYTES,
                held + " B held for " + bytes + " B");
        assertTrue(segments < 2000 / 10, "messages share segments: " + segments + " segments");
        log.release();
    }

    @Test
    void segmentsGrowFromTheSmallestToTheLargestAndABigMessageGetsItsOwn() {
        ByteLog log = new ByteLog(ALLOC);
        long charge = log.chargeFor(10);
        assertEquals(ByteLog.MIN_SEGMENT_BYTES + RunLog.SEGMENT_OVERHEAD_BYTES + ByteLog.INDEX_BYTES_PER_MESSAGE,
                charge, "the first segment is the smallest");
        append(log, "x".repeat(10));
        assertEquals(ByteLog.INDEX_BYTES_PER_MESSAGE, log.chargeFor(ByteLog.MIN_SEGMENT_BYTES - 10),
                "a message that fits in the last segment's room takes only its boundary");
        int big = ByteLog.MAX_SEGMENT_BYTES * 3;
        assertEquals(big + RunLog.SEGMENT_OVERHEAD_BYTES + ByteLog.INDEX_BYTES_PER_MESSAGE, log.chargeFor(big),
                "a message larger than the largest segment gets one of its own size");
        for (int i = 0; i < 200; i++) {
            append(log, "z".repeat(500));
        }
        long grown = log.chargeFor(ByteLog.MAX_SEGMENT_BYTES - 1) - RunLog.SEGMENT_OVERHEAD_BYTES
                - ByteLog.INDEX_BYTES_PER_MESSAGE;
        assertEquals(ByteLog.MAX_SEGMENT_BYTES, grown, "a grown log's new segments are the largest");
        log.release();
    }
}
