package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The log's resume arithmetic under any input: random appends (sizes across segment boundaries, packing on or off,
 * shared copies or not), an optional seal, then reads from any {@code long} id. Properties: nothing throws; the
 * reads after Last-Event-ID k are exactly frames k+1..n in order; the direct bytes really allocated equal the bytes
 * the log accounts for (plus its counted copies); after release nothing is left (no leak).
 */
class RunLogFuzzTest {
    private static final long[] EDGE_IDS = {Long.MIN_VALUE, Integer.MIN_VALUE, -1, 0, 1, 2,
        Integer.MAX_VALUE - 1L, Integer.MAX_VALUE, Integer.MAX_VALUE + 1L, Long.MAX_VALUE - 1, Long.MAX_VALUE};

    @FuzzTest(maxDuration = "20s")
    void readsAfterAnyIdAreExactlyTheLaterFrames(FuzzedDataProvider data) {
        // not leak-tracked and not pooled: its metric is the exact direct memory the log holds
        UnpooledByteBufAllocator allocator = new UnpooledByteBufAllocator(true, true);
        boolean packing = data.consumeBoolean();
        boolean shared = data.consumeBoolean();
        SegmentCodec codec = packing ? new SegmentCodec(allocator) : null;
        MemoryBudget budget = new MemoryBudget(Long.MAX_VALUE / 4);
        SegmentCopies copies = shared ? new SegmentCopies(budget) : null;
        RunLog log = new RunLog(allocator, codec, copies);
        List<String> frames = new ArrayList<>();
        int events = data.consumeInt(0, 200);
        for (int i = 0; i < events; i++) {
            int length = data.consumeBoolean() ? data.consumeInt(0, 64) : data.consumeInt(0, 2 * RunLog.SEGMENT_BYTES);
            char fill = (char) ('a' + data.consumeInt(0, 25));
            String json = "{\"type\":\"E\",\"d\":\"" + String.valueOf(fill).repeat(length) + "\""
                    + (data.consumeBoolean() ? ",\n\"x\":1}" : "}");
            int frameLength = log.frameLength(json.length());
            long charged = log.heldBytesAfterAppend(frameLength);
            log.append(Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.UTF_8))); // untracked heap copy
            assertTrue(log.heldBytes() <= charged, "what is charged before an append covers it");
            frames.add("id: " + (i + 1) + "\ndata: " + json.replace('\n', ' ') + "\n\n");
        }
        if (data.consumeBoolean()) {
            log.seal();
        }
        log.takeFreedBytes();
        // a live packed log keeps its newest packed segment's plain bytes as a shared copy (counted by the copies)
        long lingering = copies == null ? 0 : copies.heldBytes() - copies.size() * SegmentCopies.COPY_OVERHEAD_BYTES;
        assertEquals(log.capacityBytes() + log.indexBytes() + lingering, allocator.metric().usedDirectMemory(),
                "bytes accounted == bytes held");
        int reads = data.consumeInt(1, 6);
        for (int r = 0; r < reads; r++) {
            long after = data.consumeBoolean() ? EDGE_IDS[data.consumeInt(0, EDGE_IDS.length - 1)]
                    : data.consumeBoolean() ? data.consumeLong() : data.consumeInt(-2, events + 2);
            assertEquals(expectedAfter(frames, after), readAfter(log, after), "after " + after);
        }
        long copyBytes = copies == null ? 0 : copies.heldBytes() - copies.size() * SegmentCopies.COPY_OVERHEAD_BYTES;
        assertEquals(log.capacityBytes() + log.indexBytes() + copyBytes, allocator.metric().usedDirectMemory(),
                "segments plus counted copies are all that is held");
        if (copies != null) {
            assertEquals(copies.heldBytes(), budget.committedBytes(), "every copy charged");
            copies.sweep();
            assertEquals(0, copies.size(), "no reader holds a slice: every copy freed");
            assertEquals(0, budget.committedBytes());
        }
        log.release();
        if (codec != null) {
            codec.close();
        }
        assertEquals(0, allocator.metric().usedDirectMemory(), "nothing leaked");
    }

    /** Frames k+1..n for Last-Event-ID {@code after} (all of them when it is negative). */
    private static String expectedAfter(List<String> frames, long after) {
        StringBuilder sb = new StringBuilder();
        for (int i = (int) Math.max(0, Math.min(after, frames.size())); i < frames.size(); i++) {
            sb.append(frames.get(i));
        }
        return sb.toString();
    }

    /** What a subscriber with Last-Event-ID {@code after} reads, slice by slice, as SubscriberStream does. */
    private static String readAfter(RunLog log, long after) {
        StringBuilder sb = new StringBuilder();
        long id = after == Long.MAX_VALUE ? Long.MAX_VALUE : after + 1;
        for (int guard = 0; guard <= log.size() + 1; guard++) {
            ByteBuf slice = log.readFrom(id);
            assertNotNull(slice, "the budget is ample: a read is never refused here");
            if (slice == RunLog.NOTHING) {
                assertEquals(Math.max(id, 1) - 1, log.lastIdInSegmentOf(id), "nothing read: the cursor stays");
                return sb.toString();
            }
            sb.append(slice.toString(StandardCharsets.UTF_8));
            slice.release();
            long last = log.lastIdInSegmentOf(id);
            assertTrue(last >= Math.max(id, 1) && last <= log.size(), "the cursor moves forward within the log");
            id = last + 1;
        }
        throw new AssertionError("reading after " + after + " did not end");
    }
}
