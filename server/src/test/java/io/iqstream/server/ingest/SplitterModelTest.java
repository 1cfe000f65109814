package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The fuzzers' reference model and harness agree with the splitters on hand-picked bodies, in three chunkings. */
class SplitterModelTest {
    static java.util.stream.Stream<String[]> bodies() {
        return java.util.stream.Stream.of(
            new String[] {"application/x-ndjson", "16", "{\"type\":\"A\"}\n\n{\"type\":\"B\"}\r\n{\"type\":\"C\"}"},
            new String[] {"application/x-ndjson", "16", "{\"type\":\"A\"}\n{\"type\":\"BBBBBBBBBBBB\"}\n{\"type\":\"C\"}\n"},
            new String[] {"application/x-ndjson", "16", "{\"type\":\"A\"}\n                       \n"},
            new String[] {"application/x-ndjson", "16", "{\"type\":\"A\",\"type\":\"B\"}\n"},
            new String[] {"application/x-ndjson", "16", "\uFEFF{\"type\":\"A\"}\n"},
            new String[] {"text/event-stream", "16", ": c\ndata: {\"type\":\"A\"}\n\ndata\ndata:x\n\ndata: {\"type\":\"C\"}"},
            new String[] {"text/event-stream", "16", "data: {\"type\":\ndata:\"A\"}\r\n\r\n: ccccccccccccccccccccccccccccccccccc\n"},
            new String[] {"text/event-stream", "16", "\uFEFFdata: {\"type\":\"A\"}\n\n"},
            new String[] {"application/json", "16", "[{\"type\":\"A\"},[{\"type\":\"N1\"}],{\"type\":\"TOP\"}]"},
            new String[] {"application/json", "16", "[[[]]]"},
            new String[] {"application/json", "64", "[\n  {\n    \"type\": \"A\"\n  },\n  {\n    \"type\": \"B\"\n  }\n]\n"},
            new String[] {"application/json", "16", "  {\"type\":\"A\"}  "},
            new String[] {"application/json", "16", "{\"type\":\"A\"}{\"type\":\"B\"}"},
            new String[] {"application/json", "16", "[{\"type\":\"A\"},]"},
            new String[] {"application/json", "16", "[{\"type\":\"A\"} {\"type\":\"B\"}]"},
            new String[] {"application/json", "16", "[{\"type\":\"A\"},{\"type\":\"B\",\"d\":\"]}}}}}}}}}}}\"}]"},
            new String[] {"application/json", "16", "[]"},
            new String[] {"application/json", "16", ""},
            new String[] {"application/json", "16", "\uFEFF[{\"type\":\"A\"}]"});
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("bodies")
    void splitterMatchesTheModel(String contentType, String cap, String body) {
        SplitterModel.checkAllChunkings(contentType, Integer.parseInt(cap), body);
    }

    @ParameterizedTest
    @CsvSource({"c08a", "eda080", "f4908080", "e282"})
    void modelRefusesInvalidUtf8(String hex) {
        byte[] bad = java.util.HexFormat.of().parseHex(hex);
        byte[] event = ("{\"type\":\"A\",\"d\":\"" + new String(new char[0]) ).getBytes(StandardCharsets.UTF_8);
        byte[] all = new byte[event.length + bad.length + 2];
        System.arraycopy(event, 0, all, 0, event.length);
        System.arraycopy(bad, 0, all, event.length, bad.length);
        all[all.length - 2] = '"';
        all[all.length - 1] = '}';
        assertEquals(false, SplitterModel.validEvent(all));
    }

    @ParameterizedTest
    @CsvSource({"application/x-ndjson", "application/json", "text/event-stream"})
    void harnessFailsWhenSplitterAndModelDisagree(String contentType) {
        byte[] body = (contentType.equals("text/event-stream") ? "data: {\"type\":\"AAAAAAAAAA\"}\n\n"
                : "{\"type\":\"AAAAAAAAAA\"}\n").getBytes(StandardCharsets.UTF_8);
        SplitterModel.compare(contentType, 64, 64, new int[] {3}, body);
        assertThrows(AssertionError.class, () -> SplitterModel.compare(contentType, 8, 64, new int[] {3}, body));
    }
}
