package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RunLogTest {
    private static ByteBuf json(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    private static String read(RunLog log, long fromId) {
        StringBuilder sb = new StringBuilder();
        long id = fromId;
        while (id <= log.size()) {
            ByteBuf slice = log.readFrom(id);
            sb.append(slice.toString(StandardCharsets.UTF_8));
            slice.release();
            id = log.lastIdInSegmentOf(id) + 1;
        }
        return sb.toString();
    }

    private static void append(RunLog log, String s) {
        ByteBuf b = json(s);
        log.append(b);
        b.release();
    }

    @Test
    void encodesEachEventAsAnSseFrameWithItsId() {
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT);
        append(log, "{\"type\":\"A\"}");
        append(log, "{\"type\":\"B\",\n\"x\":1}");
        assertEquals("id: 1\ndata: {\"type\":\"A\"}\n\nid: 2\ndata: {\"type\":\"B\", \"x\":1}\n\n", read(log, 1));
        assertEquals("id: 2\ndata: {\"type\":\"B\", \"x\":1}\n\n", read(log, 2));
        log.release();
    }

    @Test
    void readsAcrossSegmentsFromAnyIdWithoutGapOrDuplicate() {
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT);
        StringBuilder expected = new StringBuilder();
        for (int i = 1; i <= 500; i++) {
            String e = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"" + "w".repeat(i % 40) + "\"}";
            append(log, e);
            expected.append("id: ").append(i).append("\ndata: ").append(e).append("\n\n");
        }
        String all = expected.toString();
        assertEquals(all, read(log, 1));
        for (int from : new int[] {2, 99, 250, 500}) {
            assertEquals(all.substring(all.indexOf("id: " + from + "\n")), read(log, from), "from " + from);
        }
        assertEquals(all.length(), log.frameBytes());
        log.release();
    }

    @Test
    void eventLargerThanASegmentGetsItsOwn() {
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT);
        append(log, "{\"type\":\"A\"}");
        String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "c".repeat(3 * RunLog.SEGMENT_BYTES) + "\"}";
        append(log, big);
        append(log, "{\"type\":\"C\"}");
        assertTrue(read(log, 2).startsWith("id: 2\ndata: " + big + "\n\nid: 3\n"));
        log.release();
    }

    @Test
    void sealKeepsFramesAndShrinksToTheirExactSize() {
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT);
        for (int i = 0; i < 300; i++) {
            append(log, "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"tok" + i + "\"}");
        }
        String before = read(log, 1);
        ByteBuf held = log.readFrom(1); // a subscriber still holding a slice of an old segment
        long delta = log.seal();
        assertTrue(delta < 0, "sealing gives memory back");
        // one buffer for the frames: charged at the pool's size class for them (a quarter above them at most)
        assertTrue(log.capacityBytes() >= log.frameBytes() && log.capacityBytes() <= log.frameBytes() * 5 / 4,
                log.capacityBytes() + " B charged for " + log.frameBytes() + " B of frames");
        assertEquals(before, read(log, 1));
        assertEquals(before.substring(before.indexOf("id: 150\n")), read(log, 150));
        assertTrue(held.toString(StandardCharsets.UTF_8).startsWith("id: 1\n"), "old slice still valid");
        held.release();
        assertEquals(log.heldBytes(), log.release());
        assertTrue(log.isReleased());
    }

    /** Every read of a log (from each id, to the end and to a fixed tail), as text: what a seal must keep. */
    private static List<String> everyRead(RunLog log) {
        List<String> out = new ArrayList<>();
        for (long from = 0; from <= log.size() + 1; from++) {
            out.add(read(log, from));
            for (long to : new long[] {from, from + 1, from + 37, log.size() - 1}) {
                ByteBuf b = log.readFrom(from, to);
                out.add(from + ".." + to + ":" + b.toString(StandardCharsets.UTF_8));
                b.release();
            }
        }
        return out;
    }

    @Test
    void sealingAPackedLogFreesItsIndexAndEveryReadStaysTheSame() {
        for (boolean shared : new boolean[] {true, false}) {
            MemoryBudget budget = new MemoryBudget(64 << 20);
            SegmentCopies copies = shared ? new SegmentCopies(budget) : null;
            SegmentCodec codec = new SegmentCodec(PooledByteBufAllocator.DEFAULT);
            RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT, codec, copies);
            java.util.Random rnd = new java.util.Random(7);
            for (int i = 0; i < 450; i++) {
                // text that packs, a segment of random bytes that does not (kept plain), and a pretty-printed event
                String delta = i >= 200 && i < 260 ? Long.toString(rnd.nextLong(), 36).repeat(3) : "tok" + i % 17;
                append(log, i == 300 ? "{\"type\":\"STEP_STARTED\",\n\n\"stepName\":\"s\"}"
                        : "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"" + delta + "\"}");
                log.takeFreedBytes();
            }
            List<String> before = everyRead(log);
            long index = log.indexBytes();
            long held = log.heldBytes();
            assertTrue(index >= 4 * 450, "the live log's index: " + index);
            long delta = log.seal();
            assertEquals(0, log.indexBytes(), "a sealed packed log holds no index");
            assertTrue(-delta >= index, "sealing gives back at least the index: " + delta + " of " + held);
            assertEquals(before, everyRead(log), "every read after the seal, shared copies " + shared);
            assertThrowsSealed(log);
            if (copies != null) {
                copies.sweep();
            }
            log.release();
            codec.close();
        }
    }

    private static void assertThrowsSealed(RunLog log) {
        ByteBuf b = json("{\"type\":\"X\"}");
        try {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> log.append(b));
        } finally {
            b.release();
        }
    }

    @Test
    void outOfRangeIdsReadNothingAndNeverThrow() {
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT, new SegmentCodec(PooledByteBufAllocator.DEFAULT));
        for (int i = 0; i < 700; i++) {
            append(log, "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"tok" + i + "\"}");
        }
        log.seal();
        for (long id : new long[] {701, 702, Integer.MAX_VALUE, Integer.MAX_VALUE + 1L, Long.MAX_VALUE}) {
            assertSame(RunLog.NOTHING, log.readFrom(id), "id " + id);
            assertEquals(id - 1, log.lastIdInSegmentOf(id), "cursor stays at " + id);
        }
        String all = read(log, 1);
        for (long id : new long[] {0, -1, Integer.MIN_VALUE, Long.MIN_VALUE}) {
            assertEquals(all, read(log, id), "ids below 1 read from the start: " + id);
        }
        assertEquals(all.substring(all.indexOf("id: 700\n")), read(log, 700));
        log.release();
        assertSame(RunLog.NOTHING, log.readFrom(1), "a released log has nothing to read");
    }

    @Test
    void anEmptyLogHasNothingToReadFromAnyId() {
        // found by RunLogFuzzTest: ids below 1 on an empty log read past the index
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT);
        for (long id : new long[] {Long.MIN_VALUE, -1, 0, 1, Integer.MAX_VALUE, Long.MAX_VALUE}) {
            assertSame(RunLog.NOTHING, log.readFrom(id), "id " + id);
            assertEquals(Math.max(id, 1) - 1, log.lastIdInSegmentOf(id), "no overflow at " + id);
        }
        log.release();
    }

    @Test
    void heldBytesCountTheIndexOfEveryEvent() {
        // not leak-tracked: PARANOID tracking of 200,000 appends would take minutes
        ByteBufAllocator untracked = new UnpooledByteBufAllocator(true, true);
        SegmentCodec codec = new SegmentCodec(untracked);
        RunLog log = new RunLog(untracked, codec);
        int events = 200_000;
        for (int i = 0; i < events; i++) {
            int frame = log.frameLength(12);
            long expected = log.heldBytesAfterAppend(frame);
            append(log, "{\"type\":\"X\"}");
            log.takeFreedBytes();
            assertTrue(log.heldBytes() <= expected, "charged before the append covers it at event " + (i + 1));
        }
        assertTrue(log.indexBytes() >= 4L * events, "index counted: " + log.indexBytes());
        assertTrue(log.indexBytes() <= 4L * events + 8 * 1024,
                "index is about 4 bytes per event: " + log.indexBytes());
        assertTrue(log.heldBytes() >= log.capacityBytes() + log.indexBytes());
        System.out.printf("%d events of {\"type\":\"X\"}: %d B held (segments %d B, index %d B)%n", events,
                log.heldBytes(), log.capacityBytes(), log.indexBytes());
        log.release();
        codec.close();
    }

    @Test
    void readersOfAPackedSegmentShareOneCountedCopy() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        SegmentCopies copies = new SegmentCopies(budget);
        SegmentCodec codec = new SegmentCodec(PooledByteBufAllocator.DEFAULT);
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT, codec, copies);
        String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "a".repeat(100_000) + "\"}";
        append(log, big);
        append(log, big);
        log.seal();
        List<ByteBuf> held = new ArrayList<>();
        for (int reader = 0; reader < 60; reader++) {
            held.add(log.readFrom(1));
        }
        assertEquals(1, copies.size(), "one copy for sixty readers");
        assertEquals(copies.heldBytes(), budget.committedBytes(), "the copy is charged");
        assertTrue(copies.heldBytes() >= 100_000);
        assertEquals(0, copies.sweep(), "in use: kept");
        for (ByteBuf b : held) {
            b.release();
        }
        assertTrue(copies.sweep() > 0, "idle: freed");
        assertEquals(0, copies.size());
        assertEquals(0, budget.committedBytes(), "its bytes given back");
        assertEquals(0, log.unpackedCopies());
        log.release();
        codec.close();
    }

    @Test
    void aCopyTheBudgetCannotTakeIsRefusedNotMade() {
        MemoryBudget budget = new MemoryBudget(4 * 150_000); // copies may take a quarter: one 100 KB copy fits
        SegmentCopies copies = new SegmentCopies(budget);
        SegmentCodec codec = new SegmentCodec(PooledByteBufAllocator.DEFAULT);
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT, codec, copies);
        String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "a".repeat(100_000) + "\"}";
        append(log, big);
        append(log, big);
        log.seal();
        ByteBuf first = log.readFrom(1);
        assertEquals(null, log.readFrom(2), "a second copy does not fit");
        assertEquals(1, copies.refused());
        first.release();
        ByteBuf second = log.readFrom(2);
        assertTrue(second != null, "once the first is idle it is freed and the second fits");
        assertEquals(1, copies.size());
        second.release();
        log.release();
        assertEquals(0, copies.size(), "a released log gives its copies back");
        assertEquals(0, budget.committedBytes());
        codec.close();
    }

    private static String token(int i) {
        return "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"" + "w".repeat(i % 40) + "\"}";
    }

    @Test
    void aLiveRunKeepsItsNewestPackedSegmentUnpackedForAShortWhile() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        AtomicLong now = new AtomicLong(-5_000_000_000L); // nanoTime may be negative
        SegmentCopies copies = new SegmentCopies(budget, now::get);
        SegmentCodec codec = new SegmentCodec(PooledByteBufAllocator.DEFAULT);
        RunLog packed = new RunLog(PooledByteBufAllocator.DEFAULT, codec, copies);
        RunLog plain = new RunLog(PooledByteBufAllocator.DEFAULT);
        int i = 0;
        do { // until two segments are packed and a third is the tail
            append(packed, token(++i));
            append(plain, token(i));
        } while (packed.lastIdInSegmentOf(packed.lastIdInSegmentOf(1) + 1) >= packed.size());
        long newestPackedFirst = packed.lastIdInSegmentOf(1) + 1; // the second segment: packed, the newest packed
        assertTrue(packed.lastIdInSegmentOf(newestPackedFirst) < packed.size(), "a tail segment follows it");
        assertEquals(1, copies.size(), "only the newest packed segment lingers, the one before was replaced");
        assertEquals(1, packed.unpackedCopies());
        assertEquals(copies.heldBytes(), budget.committedBytes(), "the lingering copy is charged");
        for (long from = 1; from <= packed.size(); from++) {
            assertEquals(read(plain, from), read(packed, from), "a resume after " + (from - 1) + " as from plain");
        }
        assertEquals(2, copies.size(), "a resume into the older packed segment made its own copy");
        copies.sweep(now.get());
        assertEquals(1, copies.size(), "the periodic sweep frees that one once idle, not the lingering one");
        copies.sweep(now.get() + SegmentCopies.LINGER_NANOS - 1);
        assertEquals(1, copies.size(), "idle but within its linger: kept");
        ByteBuf resumed = packed.readFrom(newestPackedFirst + 3);
        assertEquals(1, copies.size(), "read from the lingering copy: no unpack");
        now.addAndGet(SegmentCopies.LINGER_NANOS);
        assertEquals(0, copies.sweep(now.get()), "past its linger but read: kept");
        resumed.release();
        assertTrue(copies.sweep(now.get()) > 0, "past its linger and idle: freed");
        assertEquals(0, copies.size());
        assertEquals(0, budget.committedBytes(), "its bytes given back");
        assertEquals(read(plain, newestPackedFirst), read(packed, newestPackedFirst), "unpacked again on demand");
        packed.release();
        plain.release();
        copies.sweep();
        assertEquals(0, budget.committedBytes());
        codec.close();
    }

    @Test
    void sealingDropsTheLingeringCopyAndAFullBudgetTakesNone() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        SegmentCopies copies = new SegmentCopies(budget);
        SegmentCodec codec = new SegmentCodec(PooledByteBufAllocator.DEFAULT);
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT, codec, copies);
        for (int i = 1; i <= 300; i++) {
            append(log, token(i));
        }
        assertEquals(1, copies.size(), "a live run's newest packed segment lingers");
        log.seal();
        assertEquals(0, copies.size(), "an ended run at rest holds its packed bytes only");
        assertEquals(0, log.unpackedCopies());
        assertEquals(0, budget.committedBytes());
        log.release();

        MemoryBudget halfFull = new MemoryBudget(1 << 20);
        assertTrue(halfFull.tryChargeWithinBudget(1 << 19));
        SegmentCopies tight = new SegmentCopies(halfFull);
        RunLog live = new RunLog(PooledByteBufAllocator.DEFAULT, codec, tight);
        for (int i = 1; i <= 300; i++) {
            append(live, token(i));
        }
        assertEquals(0, tight.size(), "a budget half used keeps no lingering copy");
        assertEquals(1L << 19, halfFull.committedBytes());
        live.release();
        codec.close();
    }
}
