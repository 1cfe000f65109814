package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
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
        String framingError;
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
        public void onFramingError(String message) {
            framingError = message;
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
        assertNotNull(c.framingError);
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
}
