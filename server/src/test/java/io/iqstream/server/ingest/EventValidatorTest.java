package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
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
        "{type:\"X\"}|BAD_JSON"
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
}
