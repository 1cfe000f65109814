package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EventValidatorTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"hi\"}|OK",
        "{\"a\":{\"type\":1},\"type\":\"X\"}|OK",
        "{\"type\":\"RUN_FINISHED\"}|OK_TERMINAL",
        "{\"type\":\"RUN_ERROR\",\"message\":\"m\"}|OK_TERMINAL",
        "{\"type\":3}|MISSING_TYPE",
        "{\"kind\":\"X\"}|MISSING_TYPE",
        "[1,2]|NOT_AN_OBJECT",
        "\"x\"|NOT_AN_OBJECT",
        "{\"type\":\"X\"|BAD_JSON",
        "{\"type\":\"X\"} {}|BAD_JSON",
        "{\"type\":\"X\",}|BAD_JSON",
        "{type:\"X\"}|BAD_JSON",
        "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"type\":\"RUN_FINISHED\"}|DUPLICATE_TYPE",
        "{\"type\":\"A\",\"typ\\u0065\":\"B\"}|DUPLICATE_TYPE",
        "{\"type\":\"A\",\"o\":{\"type\":\"B\"}}|OK",
        "{\"type\":\"é€😀\"}|OK"
    })
    void classifiesEvents(String json, EventCheck expected) {
        EventValidator v = new EventValidator();
        ByteBuf heap = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(json.getBytes(StandardCharsets.UTF_8));
        try {
            assertEquals(expected, v.check(heap));
            assertEquals(expected, v.check(direct));
        } finally {
            heap.release();
            direct.release();
        }
    }

    /** The verdicts in a UI message stream run: its closing chunk types, [DONE], and AG-UI's names as plain. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"hi\"}|OK",
        "{\"type\":\"finish\",\"finishReason\":\"stop\"}|OK_CLOSING",
        "{\"type\":\"abort\"}|OK_CLOSING",
        "{\"type\":\"error\",\"errorText\":\"e\"}|OK_CLOSING",
        "{\"type\":\"fin\u0069sh\"}|OK_CLOSING",
        "{\"type\":\"finish-step\"}|OK",
        "{\"type\":\"RUN_FINISHED\"}|OK",
        "[DONE]|END_MARKER",
        "'[DONE] '|NOT_AN_OBJECT",
        "{\"delta\":\"x\"}|MISSING_TYPE"
    })
    void classifiesUiMessageStreamChunks(String json, EventCheck expected) {
        EventValidator v = new EventValidator(io.iqstream.server.run.RunProtocol.UI_MESSAGE_STREAM);
        ByteBuf heap = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
        try {
            assertEquals(expected, v.check(heap));
        } finally {
            heap.release();
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"[DONE]|NOT_AN_OBJECT", "{\"type\":\"finish\"}|OK"})
    void agUiKnowsNoDoneAndNoClosingChunk(String json, EventCheck expected) {
        ByteBuf heap = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
        try {
            assertEquals(expected, new EventValidator().check(heap));
        } finally {
            heap.release();
        }
    }

    @ParameterizedTest
    @CsvSource({
        "c08a, overlong LF",
        "e080af, overlong three-byte",
        "f0808080, overlong four-byte",
        "eda080, surrogate D800",
        "edbfbf, surrogate DFFF",
        "f4908080, above U+10FFFF",
        "f5808080, lead byte F5",
        "ff, byte FF",
        "80, lone continuation",
        "c3, truncated two-byte",
        "e282, truncated three-byte",
        "f09f98, truncated four-byte",
        "c328, bad continuation"
    })
    void refusesInvalidUtf8InsideAString(String hex, String what) {
        byte[] bad = HexFormat.of().parseHex(hex);
        byte[] head = "{\"type\":\"X\",\"d\":\"".getBytes(StandardCharsets.UTF_8);
        byte[] tail = "\"}".getBytes(StandardCharsets.UTF_8);
        byte[] json = new byte[head.length + bad.length + tail.length];
        System.arraycopy(head, 0, json, 0, head.length);
        System.arraycopy(bad, 0, json, head.length, bad.length);
        System.arraycopy(tail, 0, json, head.length + bad.length, tail.length);
        EventValidator v = new EventValidator();
        ByteBuf heap = Unpooled.wrappedBuffer(json);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(json);
        try {
            assertEquals(EventCheck.BAD_UTF8, v.check(heap), what);
            assertEquals(EventCheck.BAD_UTF8, v.check(direct), what);
        } finally {
            heap.release();
            direct.release();
        }
    }
}
