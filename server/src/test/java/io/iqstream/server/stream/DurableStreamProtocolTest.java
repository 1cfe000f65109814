package io.iqstream.server.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
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
    void jsonAppendsFlattenOneArrayLevel() {
        List<byte[]> v = DurableStreamProtocol.jsonValues("[{\"a\":1},[2,3],\"x\"]".getBytes(StandardCharsets.UTF_8));
        assertEquals(3, v.size());
        assertEquals("[2,3]", new String(v.get(1), StandardCharsets.UTF_8));
        assertEquals(1, DurableStreamProtocol.jsonValues("{\"a\": 1}".getBytes(StandardCharsets.UTF_8)).size());
        assertEquals(0, DurableStreamProtocol.jsonValues("[]".getBytes(StandardCharsets.UTF_8)).size());
        assertNull(DurableStreamProtocol.jsonValues("{\"a\":".getBytes(StandardCharsets.UTF_8)));
        assertNull(DurableStreamProtocol.jsonValues("1 2".getBytes(StandardCharsets.UTF_8)));
        assertEquals("0.10000000000000000001", new String(DurableStreamProtocol.jsonValues(
                "0.10000000000000000001".getBytes(StandardCharsets.UTF_8)).get(0), StandardCharsets.UTF_8));
    }

    @Test
    void sseDataIsOneLinePerLineWhateverTheLineEnd() {
        StringBuilder sb = new StringBuilder();
        DurableStreamProtocol.sseEvent(sb, "data", "a\r\nb\rc\nd");
        assertEquals("event: data\ndata:a\ndata:b\ndata:c\ndata:d\n\n", sb.toString());
    }

    @Test
    void cursorAdvancesPastAClientsCursor() {
        long now = DurableStreamProtocol.CURSOR_EPOCH_MS + 100 * DurableStreamProtocol.CURSOR_INTERVAL_MS + 5;
        assertEquals("100", DurableStreamProtocol.cursor(null, now, 0));
        assertEquals("100", DurableStreamProtocol.cursor("42", now, 0));
        assertTrue(Long.parseLong(DurableStreamProtocol.cursor("100", now, 12345)) > 100);
    }
}
