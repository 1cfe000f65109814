package io.iqstream.server.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The protocol's pure rules: offsets, TTL and producer numbers, JSON values, SSE framing, the cursor. */
class DurableStreamProtocolTest {
    @Test
    void offsetsRoundTripAndSortAsStrings() {
        assertEquals("0000000000000000_0000000000000000", DurableStreamProtocol.offset(0));
        assertEquals("0000000000000000_0000000000001234", DurableStreamProtocol.offset(1234));
        assertEquals(1234, DurableStreamProtocol.position(DurableStreamProtocol.offset(1234)));
        assertEquals(-1, DurableStreamProtocol.position("-1"));
        assertTrue(DurableStreamProtocol.offset(9).compareTo(DurableStreamProtocol.offset(10)) < 0);
        for (String bad : new String[] {"now", "abc", "1_", "_1", "1_2_3", "-2", "1_99999999999999999999"}) {
            assertEquals(Long.MIN_VALUE, DurableStreamProtocol.position(bad), bad);
        }
    }

    @Test
    void ttlAndProducerNumbersAreStrict() {
        assertEquals(60, DurableStreamProtocol.ttlSeconds("60"));
        assertEquals(0, DurableStreamProtocol.ttlSeconds("0"));
        for (String bad : new String[] {"060", "+60", "6.0", "6e1", "-1", ""}) {
            assertEquals(-1, DurableStreamProtocol.ttlSeconds(bad), bad);
        }
        assertEquals(-1, DurableStreamProtocol.producerNumber("1.5"));
        assertEquals(7, DurableStreamProtocol.producerNumber("7"));
    }

    @Test
    void jsonAppendsFlattenOneArrayLevelAndKeepEachValuesBytes() {
        assertEquals(List.of("{\"a\":1}", "[2,3]", "\"x\""), values("[{\"a\":1},[2,3],\"x\"]"));
        assertEquals(List.of("1", "2", "3"), values("[1, 2 ,3]"));
        assertEquals(List.of("\"s\"", "true", "null", "-1.5e3"), values("[ \"s\" , true,null,-1.5e3 ]"));
        assertEquals(List.of("\"a\\\"b,]\""), values("\"a\\\"b,]\""));
        assertEquals(List.of("42"), values(" 42 "));
        assertEquals(List.of("{\n  \"a\": 1\n}"), values("{\n  \"a\": 1\n}\n"));
        assertEquals(List.of("0.10000000000000000001"), values("0.10000000000000000001"));
        assertEquals(List.of("[[1,2,3]]"), values("[[[1,2,3]]]"));
        assertEquals(List.of(), values("[]"));
        for (String bad : new String[] {"{\"a\":", "1 2", "[1,]", "", "nul", "{\"a\" 1}", "[1] x"}) {
            assertNull(values(bad), bad);
        }
    }

    private static List<String> values(String json) {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        int[] ranges = DurableStreamProtocol.jsonValueRanges(bytes, bytes.length);
        if (ranges == null) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < ranges.length; i += 2) {
            out.add(new String(bytes, ranges[i], ranges[i + 1] - ranges[i], StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    void sseDataIsOneLinePerLineWhateverTheLineEnd() {
        assertEquals("event: data\ndata:a\ndata:b\ndata:c\ndata:d\n\n", data("a\r\nb\rc\nd", false, false));
        assertEquals("event: data\ndata:[{\"a\":1},2]\n\n", data("{\"a\":1},2", true, false));
        assertEquals("event: data\ndata:AAEC/w==\n\n", data(new byte[] {0, 1, 2, (byte) 0xff}, true));
        assertEquals("event: data\ndata:\n\n", data("", false, false));
    }

    @Test
    void controlEventsNameTheOffsetAndTheState() {
        ByteBuf out = Unpooled.buffer();
        DurableStreamProtocol.writeControlEvent(out, 42, false, "7", true);
        assertEquals("event: control\ndata:{\"streamNextOffset\":\"0000000000000000_0000000000000042\","
                + "\"streamCursor\":\"7\",\"upToDate\":true}\n\n", out.toString(StandardCharsets.UTF_8));
        out.clear();
        DurableStreamProtocol.writeControlEvent(out, 1234567890123L, true, "7", true);
        assertEquals("event: control\ndata:{\"streamNextOffset\":\"0000000000000000_0000001234567890\"".replace(
                "0000001234567890", "0001234567890123") + ",\"streamClosed\":true}\n\n",
                out.toString(StandardCharsets.UTF_8));
        out.release();
    }

    private static String data(String text, boolean json, boolean base64) {
        return data(text.getBytes(StandardCharsets.UTF_8), json, base64);
    }

    private static String data(byte[] bytes, boolean base64) {
        return data(bytes, false, base64);
    }

    private static String data(byte[] bytes, boolean json, boolean base64) {
        ByteBuf out = Unpooled.buffer();
        ByteBuf message = Unpooled.wrappedBuffer(bytes);
        DurableStreamProtocol.writeDataEvent(out, message, json, base64);
        assertEquals(bytes.length, message.readableBytes(), "the message is not consumed");
        String s = out.toString(StandardCharsets.UTF_8);
        out.release();
        return s;
    }

    @Test
    void cursorAdvancesPastAClientsCursor() {
        long now = DurableStreamProtocol.CURSOR_EPOCH_MS + 100 * DurableStreamProtocol.CURSOR_INTERVAL_MS + 5;
        assertEquals("100", DurableStreamProtocol.cursor(null, now, 0));
        assertEquals("100", DurableStreamProtocol.cursor("42", now, 0));
        assertTrue(Long.parseLong(DurableStreamProtocol.cursor("100", now, 12345)) > 100);
    }
}
