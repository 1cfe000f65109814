package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventSplitterTest {
    /** Collects events and failures. */
    static final class Collector implements EventSink {
        final List<String> events = new ArrayList<>();
        boolean oversize;
        boolean overBudget;
        String badEvent;
        String framingError;
        int keepAlives;
        int stopAfter = Integer.MAX_VALUE;

        @Override
        public boolean onEvent(ByteBuf json) {
            events.add(json.toString(StandardCharsets.UTF_8));
            return events.size() < stopAfter;
        }

        @Override
        public void onOversizeEvent() {
            oversize = true;
        }

        @Override
        public void onOverBudget() {
            overBudget = true;
        }

        @Override
        public void onBadEvent(String message) {
            badEvent = message;
        }

        @Override
        public void onFramingError(String message) {
            framingError = message;
        }

        @Override
        public void onKeepAlive() {
            keepAlives++;
        }
    }

    private static boolean feedAll(EventSplitter s, Collector c, String... chunks) {
        for (String chunk : chunks) {
            ByteBuf b = Unpooled.copiedBuffer(chunk, StandardCharsets.UTF_8);
            try {
                if (!s.feed(b, c)) {
                    return false;
                }
            } finally {
                b.release();
            }
        }
        return s.finish(c);
    }

    @Test
    void ndjsonEmitsEachLineAsSoonAsItsNewlineArrives() {
        EventSplitter s = EventSplitter.forContentType("application/x-ndjson", 1024);
        Collector c = new Collector();
        ByteBuf first = Unpooled.copiedBuffer("{\"type\":\"A\"}\n{\"type\":", StandardCharsets.UTF_8);
        assertTrue(s.feed(first, c));
        first.release();
        assertEquals(List.of("{\"type\":\"A\"}"), c.events);
        assertTrue(feedAll(s, c, "\"B\"}\r\n\n  \n{\"type\":\"C\"}"));
        assertEquals(List.of("{\"type\":\"A\"}", "{\"type\":\"B\"}", "{\"type\":\"C\"}"), c.events);
        s.release();
    }

    @Test
    void ndjsonLineSplitAcrossManyChunksIsReassembled() {
        EventSplitter s = EventSplitter.forContentType("application/jsonl; charset=utf-8", 1024);
        Collector c = new Collector();
        assertTrue(feedAll(s, c, "{\"ty", "pe\":", "\"X\",\"d\":\"é\"", "}\n"));
        assertEquals(List.of("{\"type\":\"X\",\"d\":\"é\"}"), c.events);
        s.release();
    }

    @Test
    void ndjsonRefusesALineLongerThanTheCapBeforeItEnds() {
        EventSplitter s = EventSplitter.forContentType("application/x-ndjson", 100);
        Collector c = new Collector();
        assertFalse(feedAll(s, c, "{\"type\":\"A\"}\n", "{\"type\":\"" + "x".repeat(200)));
        assertTrue(c.oversize);
        assertEquals(1, c.events.size());
        s.release();
    }

    @Test
    void sseFramesJoinDataLinesAndIgnoreOtherFields() {
        EventSplitter s = EventSplitter.forContentType("text/event-stream", 1024);
        Collector c = new Collector();
        assertTrue(feedAll(s, c, ": comment\nevent: x\nid: 7\nretry: 5\ndata: {\"type\":\"A\",\n",
                "data:  \"n\":1}\n\n", "data:{\"type\":\"B\"}\r\n\r\n", "data: {\"type\":\"C\"}\n"));
        assertEquals(List.of("{\"type\":\"A\",\n \"n\":1}", "{\"type\":\"B\"}", "{\"type\":\"C\"}"), c.events);
        s.release();
    }

    @Test
    void jsonArrayEmitsEachElementAsItCloses() {
        EventSplitter s = EventSplitter.forContentType("application/json", 1024);
        Collector c = new Collector();
        ByteBuf part = Unpooled.copiedBuffer("[ {\"type\":\"A\",\"o\":{\"x\":[1]}},\n {\"ty", StandardCharsets.UTF_8);
        assertTrue(s.feed(part, c));
        part.release();
        assertEquals(List.of("{\"type\":\"A\",\"o\":{\"x\":[1]}}"), c.events);
        assertTrue(feedAll(s, c, "pe\":\"B\"} ]"));
        assertEquals(List.of("{\"type\":\"A\",\"o\":{\"x\":[1]}}", "{\"type\":\"B\"}"), c.events);
        s.release();
    }

    @Test
    void jsonSingleObjectIsOneEvent() {
        EventSplitter s = EventSplitter.forContentType("application/json", 1024);
        Collector c = new Collector();
        assertTrue(feedAll(s, c, "{\"type\":\"A\"}\n"));
        assertEquals(List.of("{\"type\":\"A\"}"), c.events);
        s.release();
    }

    @Test
    void jsonArrayWithANonObjectElementIsAFramingError() {
        EventSplitter s = EventSplitter.forContentType("application/json", 1024);
        Collector c = new Collector();
        assertFalse(feedAll(s, c, "[{\"type\":\"A\"}, 3]"));
        assertEquals(1, c.events.size());
        assertNotNull(c.badEvent);
        s.release();
    }

    @Test
    void jsonMalformedBodyIsAFramingError() {
        EventSplitter s = EventSplitter.forContentType("application/json", 1024);
        Collector c = new Collector();
        assertFalse(feedAll(s, c, "[{\"type\":\"A\"} {"));
        assertNotNull(c.framingError);
        s.release();
    }

    @Test
    void unknownContentTypeHasNoSplitter() {
        assertNull(EventSplitter.forContentType("text/plain", 1024));
        assertNull(EventSplitter.forContentType(null, 1024));
    }

    private static EventSplitter pooled(String contentType, int maxEventBytes, MemoryBudget budget) {
        return EventSplitter.forContentType(contentType, maxEventBytes, PooledByteBufAllocator.DEFAULT, budget);
    }

    private static boolean feedBytes(EventSplitter s, Collector c, byte[] bytes) {
        ByteBuf b = Unpooled.wrappedBuffer(bytes);
        try {
            return s.feed(b, c);
        } finally {
            b.release();
        }
    }

    /** Feeds {@code body} one byte per chunk, then ends it. */
    private static boolean feedBytewise(EventSplitter s, Collector c, String body) {
        byte[] all = body.getBytes(StandardCharsets.UTF_8);
        for (byte b : all) {
            if (!feedBytes(s, c, new byte[] {b})) {
                return false;
            }
        }
        return s.finish(c);
    }

    @Test
    void jsonNestedArrayIsABadEventAndNothingInsideItIsTaken() {
        for (String body : List.of("[[{\"type\":\"N1\"}],{\"type\":\"TOP\"}]", "[[[]]]")) {
            EventSplitter s = pooled("application/json", 1024, null);
            Collector c = new Collector();
            assertFalse(feedAll(s, c, body));
            assertEquals(List.of(), c.events, body);
            assertNotNull(c.badEvent, body);
            s.release();
        }
    }

    @Test
    void jsonNonObjectElementIsRefusedAtItsFirstByteSoNothingOfItIsHeld() {
        for (String start : List.of("\"", "1", "-", "true", "null", "[")) {
            EventSplitter t = pooled("application/json", 1024, null);
            Collector d = new Collector();
            ByteBuf first = Unpooled.copiedBuffer("[{\"type\":\"A\"}, " + start + "aaaa", StandardCharsets.UTF_8);
            assertFalse(t.feed(first, d), start);
            first.release();
            assertEquals(1, d.events.size(), start);
            assertNotNull(d.badEvent, start);
            assertEquals(0, t.heldBytes(), start);
            t.release();
        }
    }

    @Test
    void jsonPrettyPrintedArrayIsTakenWholeInAnyChunking() {
        String pretty = "[\n  {\n    \"type\": \"RUN_STARTED\",\n    \"n\": [\n      1,\n      {\"x\": \"]}\\\"\"}\n    ]\n  },"
                + "\n  {\n    \"type\": \"RUN_FINISHED\"\n  }\n]\n";
        EventSplitter whole = pooled("application/json", 1024, null);
        Collector c = new Collector();
        assertTrue(feedAll(whole, c, pretty), c.framingError);
        assertEquals(2, c.events.size());
        whole.release();
        EventSplitter bytewise = pooled("application/json", 1024, null);
        Collector d = new Collector();
        assertTrue(feedBytewise(bytewise, d, pretty), d.framingError);
        assertEquals(c.events, d.events);
        assertEquals(0, bytewise.heldBytes());
        bytewise.release();
    }

    @Test
    void eventPastTheCapIsRefusedBeforeItsEndInEveryFormat() {
        for (String ct : List.of("application/json", "application/x-ndjson", "text/event-stream")) {
            MemoryBudget budget = new MemoryBudget(1 << 20);
            EventSplitter s = pooled(ct, 100, budget);
            Collector c = new Collector();
            String open = ct.equals("text/event-stream") ? "data: {\"type\":\"" : "{\"type\":\"";
            boolean go = feedBytes(s, c, open.getBytes(StandardCharsets.UTF_8));
            int fed = 0;
            while (go && fed < 1000) {
                go = feedBytes(s, c, "aaaaaaaaaa".getBytes(StandardCharsets.UTF_8));
                fed += 10;
                assertTrue(s.heldBytes() <= 101, ct + " holds " + s.heldBytes());
            }
            assertFalse(go, ct);
            assertTrue(c.oversize, ct);
            assertTrue(fed <= 110, ct + " read " + fed + " bytes before refusing");
            assertTrue(budget.committedBytes() > 0, ct + ": the partial event is charged");
            s.release();
            assertEquals(0, budget.committedBytes(), ct + ": the charge is given back");
        }
    }

    @Test
    void partialEventTheBudgetCannotHoldIsOverBudget() {
        for (String ct : List.of("application/json", "application/x-ndjson", "text/event-stream")) {
            MemoryBudget budget = new MemoryBudget(4096);
            assertTrue(budget.charge(4096 - 300, 0));
            EventSplitter s = pooled(ct, 100_000, budget);
            Collector c = new Collector();
            String open = ct.equals("text/event-stream") ? "data: {\"type\":\"" : "{\"type\":\"";
            assertFalse(feedAll(s, c, open, "b".repeat(8000)), ct);
            assertTrue(c.overBudget, ct);
            s.release();
            assertEquals(4096 - 300, budget.committedBytes(), ct);
        }
    }

    @Test
    void smallPartialEventOfAnAdmittedRunMayUseTheHeadroomALargeOneMayNot() {
        String[][] cases = { // content type, what opens the body, an event's start, its end
            {"application/x-ndjson", "", "{\"type\":\"TEXT_", "MESSAGE_CONTENT\",\"d\":\"x\"}\n"},
            {"text/event-stream", "", "data: {\"type\":\"TEXT_", "MESSAGE_CONTENT\",\"d\":\"x\"}\n\n"},
            {"application/json", "[", "{\"type\":\"TEXT_", "MESSAGE_CONTENT\",\"d\":\"x\"},"}};
        for (String[] k : cases) {
            // the budget proper is full (a flood): the headroom, a quarter more, is left
            MemoryBudget budget = new MemoryBudget(64 * 1024);
            assertTrue(budget.charge(64 * 1024, 0));
            EventSplitter s = pooled(k[0], 100_000, budget);
            Collector c = new Collector();
            // an ordinary event cut in two by TCP: held from the headroom, then completed
            assertTrue(feedBytes(s, c, (k[1] + k[2]).getBytes(StandardCharsets.UTF_8)), k[0] + " over budget "
                    + c.overBudget + ", over cap " + c.oversize + ", framing " + c.framingError);
            assertTrue(budget.committedBytes() > 64 * 1024, k[0] + ": the partial event is charged past the budget");
            assertTrue(feedBytes(s, c, k[3].getBytes(StandardCharsets.UTF_8)), k[0] + " " + c.framingError);
            assertEquals(List.of("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"d\":\"x\"}"), c.events, k[0]);
            // a partial event growing past KEEP_BYTES may not take the headroom
            assertFalse(feedBytes(s, c, (k[2] + "b".repeat(PartialEventBuffer.KEEP_BYTES * 2))
                    .getBytes(StandardCharsets.UTF_8)), k[0]);
            assertTrue(c.overBudget, k[0]);
            s.release();
            assertEquals(64 * 1024, budget.committedBytes(), k[0] + ": every charge given back");
        }
    }

    @Test
    void completedEventGivesItsChargeBack() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        EventSplitter s = pooled("application/x-ndjson", 100_000, budget);
        Collector c = new Collector();
        assertTrue(feedAll(s, c, "{\"type\":\"A\",\"d\":\"" + "x".repeat(20_000), "\"}\n"));
        assertEquals(1, c.events.size());
        assertTrue(budget.committedBytes() <= PartialEventBuffer.KEEP_BYTES, "held " + budget.committedBytes());
        s.release();
        assertEquals(0, budget.committedBytes());
    }

    @Test
    void byteOrderMarkAtTheStartIsSkippedInEveryFormatEvenSplit() {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        String[][] cases = {
            {"application/x-ndjson", "{\"type\":\"A\"}\n"},
            {"text/event-stream", "data: {\"type\":\"A\"}\n\n"},
            {"application/json", "[{\"type\":\"A\"}]"}};
        for (String[] k : cases) {
            for (int split = 0; split <= 3; split++) {
                EventSplitter s = pooled(k[0], 1024, null);
                Collector c = new Collector();
                byte[] body = k[1].getBytes(StandardCharsets.UTF_8);
                byte[] all = new byte[3 + body.length];
                System.arraycopy(bom, 0, all, 0, 3);
                System.arraycopy(body, 0, all, 3, body.length);
                assertTrue(feedBytes(s, c, java.util.Arrays.copyOfRange(all, 0, split)));
                assertTrue(feedBytes(s, c, java.util.Arrays.copyOfRange(all, split, all.length)));
                assertTrue(s.finish(c), k[0] + " " + c.framingError);
                assertEquals(List.of("{\"type\":\"A\"}"), c.events, k[0] + " split at " + split);
                s.release();
            }
        }
    }

    @Test
    void byteOrderMarkLaterInTheBodyIsNotSkipped() {
        EventSplitter s = pooled("application/x-ndjson", 1024, null);
        Collector c = new Collector();
        assertTrue(feedAll(s, c, "{\"type\":\"A\"}\n\uFEFF{\"type\":\"B\"}\n"));
        assertEquals("\uFEFF{\"type\":\"B\"}", c.events.get(1));
        s.release();
    }

    @Test
    void sseFramesAreTheSameInAnyChunking() {
        String body = ": keep\r\nevent: x\ndata: {\"type\":\"A\",\r\ndata\ndata:  \"n\":1}\r\n\r\n"
                + ":" + "c".repeat(300) + "\ndata:{\"type\":\"B\"}\n\ndat\ndata\r\n\ndata: {\"type\":\"C\"}";
        EventSplitter whole = pooled("text/event-stream", 1024, null);
        Collector c = new Collector();
        assertTrue(feedAll(whole, c, body));
        assertEquals(List.of("{\"type\":\"A\",\n\n \"n\":1}", "{\"type\":\"B\"}", "", "{\"type\":\"C\"}"),
                c.events);
        whole.release();
        EventSplitter bytewise = pooled("text/event-stream", 1024, null);
        Collector d = new Collector();
        assertTrue(feedBytewise(bytewise, d, body));
        assertEquals(c.events, d.events);
        bytewise.release();
    }

    @Test
    void longSseCommentHoldsNothing() {
        EventSplitter s = pooled("text/event-stream", 100, null);
        Collector c = new Collector();
        assertTrue(feedBytes(s, c, (": " + "z".repeat(5000)).getBytes(StandardCharsets.UTF_8)));
        assertTrue(feedBytes(s, c, "z".repeat(5000).getBytes(StandardCharsets.UTF_8)));
        assertEquals(0, s.heldBytes());
        assertTrue(feedAll(s, c, "\ndata: {\"type\":\"A\"}\n\n"));
        assertEquals(List.of("{\"type\":\"A\"}"), c.events);
        s.release();
    }

    @Test
    void blankLinesCommentsAndWhitespaceAreKeepAlives() {
        String[][] cases = {
            {"application/x-ndjson", "\n \r\n"},
            {"text/event-stream", ": hb\n\n"},
            {"application/json", "[ \n"}};
        for (String[] k : cases) {
            EventSplitter s = pooled(k[0], 1024, null);
            Collector c = new Collector();
            ByteBuf b = Unpooled.copiedBuffer(k[1], StandardCharsets.UTF_8);
            assertTrue(s.feed(b, c), k[0]);
            b.release();
            assertTrue(c.keepAlives > 0, k[0]);
            assertEquals(List.of(), c.events);
            s.release();
        }
    }
}
