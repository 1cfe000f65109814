package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The per-worker thread index: which events index a run, and its charge to the memory budget. */
class ThreadIndexTest {
    private static ByteBuf json(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    @Test
    void onlyARunStartedWithAStringThreadIdNamesAThread() {
        assertEquals("t-1", ThreadIndex.threadIdOfRunStarted(json(
                "{\"type\":\"RUN_STARTED\",\"input\":{\"threadId\":\"inner\",\"x\":[1,{}]},\"threadId\":\"t-1\"}")));
        assertEquals("t é", ThreadIndex.threadIdOfRunStarted(json("{\"threadId\":\"t \\u00e9\",\"type\":\"RUN_STARTED\"}")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\"}")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("{\"type\":\"RUN_STARTED\",\"threadId\":7}")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("{\"type\":\"RUN_STARTED\",\"threadId\":\"\"}")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("{\"type\":\"RUN_STARTED\"}")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("[{\"type\":\"RUN_STARTED\",\"threadId\":\"t\"}]")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\"")));
        assertNull(ThreadIndex.threadIdOfRunStarted(json("{\"type\":\"RUN_STARTED\",\"threadId\":\""
                + "x".repeat(ThreadIndex.MAX_THREAD_ID_CHARS + 1) + "\"}")));
        ByteBuf b = json("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\"}");
        int reader = b.readerIndex();
        ThreadIndex.threadIdOfRunStarted(b);
        assertEquals(reader, b.readerIndex(), "the buffer is not consumed");
    }

    @Test
    void indexedRunsAreChargedAndGiveTheirBytesBackWhenRemoved() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        ThreadIndex index = new ThreadIndex(budget);
        Run a = new Run("a", ByteBufAllocator.DEFAULT, null, null, 1);
        Run b = new Run("b", ByteBufAllocator.DEFAULT, null, null, 2);
        assertTrue(index.charge("thread", 0));
        index.add("thread", a, 100_000);
        assertTrue(index.charge("thread", 0));
        index.add("thread", b, 200_000);
        long each = ThreadIndex.bytesFor("thread");
        assertEquals(2 * each, budget.committedBytes());
        assertEquals(2 * each, index.chargedBytes());
        assertEquals("a", index.runsOf("thread", null, 10, id -> true).get(0).runId());
        assertEquals(100, index.runsOf("thread", null, 10, id -> true).get(0).startedAtMs());
        index.remove(a);
        assertEquals(each, budget.committedBytes());
        index.remove(a);
        assertEquals(each, budget.committedBytes(), "removing twice gives nothing back twice");
        index.remove(b);
        assertEquals(0, budget.committedBytes());
        assertEquals(0, index.threadCount());
        assertTrue(index.runsOf("thread", null, 10, id -> true).isEmpty());
        a.log().release();
        b.log().release();
    }

    @Test
    void aFullBudgetRefusesTheEntry() {
        MemoryBudget budget = new MemoryBudget(ThreadIndex.bytesFor("t"));
        ThreadIndex index = new ThreadIndex(budget);
        assertTrue(index.charge("t", 0));
        long hard = budget.committedBytes();
        boolean more = true;
        for (int i = 0; i < 1000 && more; i++) {
            more = index.charge("t", Long.MAX_VALUE);
        }
        assertFalse(more, "the budget refuses index entries once full");
        assertTrue(budget.committedBytes() >= hard);
    }
}
