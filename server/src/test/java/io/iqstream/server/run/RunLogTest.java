package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RunLogTest {
    private static ByteBuf json(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    private static String read(RunLog log, int fromId) {
        StringBuilder sb = new StringBuilder();
        int id = fromId;
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
        assertEquals(log.frameBytes(), log.capacityBytes());
        assertEquals(before, read(log, 1));
        assertEquals(before.substring(before.indexOf("id: 150\n")), read(log, 150));
        assertTrue(held.toString(StandardCharsets.UTF_8).startsWith("id: 1\n"), "old slice still valid");
        held.release();
        assertEquals(log.capacityBytes(), log.release());
        assertTrue(log.isReleased());
    }
}
