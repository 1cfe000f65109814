package io.iqstream.server.ingest;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.iqstream.server.json.Utf8;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * Fuzzes {@link EventValidator} (and {@link Utf8}): its verdict on heap and direct buffers, at any offset, must
 * be "valid" exactly when the reference says so (Java's strict UTF-8 decoder, Jackson's tree parser, one string
 * {@code type}), and terminal exactly for RUN_FINISHED / RUN_ERROR; and it must be the very {@link EventCheck} that
 * walking Jackson's streaming parser gives ({@link JacksonEventReference}); no exception escapes.
 */
class EventValidatorFuzzTest {
    private final EventValidator validator = new EventValidator();

    @FuzzTest(maxDuration = "30s")
    void agreesWithTheReference(FuzzedDataProvider data) {
        int pad = data.consumeInt(0, 9);
        byte[] json = data.consumeRemainingAsBytes();
        boolean utf8 = strictUtf8(json);
        if (utf8 != (Utf8.firstInvalid(json, 0, json.length) < 0)) {
            throw new AssertionError("UTF-8 verdict differs for " + HexFormat.of().formatHex(json));
        }
        boolean expected = SplitterModel.validEvent(json);
        EventCheck streaming = JacksonEventReference.check(json);
        ByteBuf heap = Unpooled.buffer(json.length + pad).writerIndex(pad).readerIndex(pad).writeBytes(json);
        ByteBuf direct = Unpooled.directBuffer(json.length + pad).writerIndex(pad).readerIndex(pad).writeBytes(json);
        try {
            for (ByteBuf b : new ByteBuf[] {heap, direct}) {
                EventCheck c = validator.check(b);
                if (c != streaming) {
                    throw new AssertionError("validator says " + c + ", Jackson's streaming parser " + streaming
                            + " for " + HexFormat.of().formatHex(json));
                }
                boolean ok = c == EventCheck.OK || c == EventCheck.OK_TERMINAL;
                if (ok != expected) {
                    throw new AssertionError("validator says " + c + ", reference " + expected + " for "
                            + HexFormat.of().formatHex(json));
                }
                if (ok) {
                    String type = SplitterModel.typeOf(json);
                    boolean terminal = type.equals("RUN_FINISHED") || type.equals("RUN_ERROR");
                    if (terminal != (c == EventCheck.OK_TERMINAL)) {
                        throw new AssertionError("terminal verdict " + c + " for type " + type);
                    }
                }
            }
        } finally {
            heap.release();
            direct.release();
        }
    }

    private static boolean strictUtf8(byte[] b) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
