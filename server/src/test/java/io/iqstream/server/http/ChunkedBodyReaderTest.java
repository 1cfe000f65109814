package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The step-down ({@link ChunkedBodyReader}) decodes what Netty's codec alone decodes ({@link StepDownModel}):
 * named cases for each path (data chunks read below the codec, the last chunk and trailers handed back, an
 * extension handed back mid-body, a bad delimiter, a pipelined request after the body, every cut of one body),
 * then 2,000 seeded random streams (the fuzz test goes on from there).
 */
class ChunkedBodyReaderTest {
    private static final String HEAD = "POST /v1/runs/r/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

    @Test
    void dataChunksComeThroughTheStepDownAndTheEndThroughTheCodec() {
        byte[] s = bytes(HEAD + "5\r\nhello\r\n1A\r\n" + "x".repeat(26) + "\r\n0\r\nX-T: v\r\n\r\n");
        List<String> trace = StepDownModel.trace(s, new int[0], true);
        assertEquals(List.of("REQUEST POST /v1/runs/r/events", "DATA " + hex("hello" + "x".repeat(26)),
                "END X-T=v", "CLOSED"), trace);
        StepDownModel.check(s, new int[0]);
    }

    @Test
    void everyCutOfABodyDecodesTheSame() {
        byte[] s = bytes(HEAD + "3\r\nabc\r\n10\r\n0123456789abcdef\r\n4;e=1\r\nwxyz\r\n2\r\nok\r\n0\r\n\r\n"
                + "GET /v1/runs/r HTTP/1.1\r\nHost: x\r\n\r\n");
        for (int a = 0; a <= s.length; a++) {
            for (int b = a; b <= s.length; b += 7) {
                StepDownModel.check(s, new int[] {a, b});
            }
        }
    }

    @Test
    void aBadDelimiterIsTheCodecsOwnError() {
        byte[] s = bytes(HEAD + "3\r\nabcX\r\n0\r\n\r\n");
        List<String> trace = StepDownModel.trace(s, new int[0], true);
        assertTrue(trace.stream().anyMatch(t -> t.startsWith("BAD BODY InvalidChunkTerminationException")),
                trace.toString());
        StepDownModel.check(s, new int[0]);
        StepDownModel.check(s, new int[] {HEAD.length() + 6});
        // one wrong byte and then the close: the codec waits for the second byte, so it is a closure mid-body
        StepDownModel.check(bytes(HEAD + "3\r\nabcX"), new int[0]);
        StepDownModel.check(bytes(HEAD + "3\r\nabc\r"), new int[0]);
    }

    @Test
    void oddSizeLinesGoToTheCodec() {
        for (String line : List.of("03", "0003", "A", "a ;x", "3;", "3\n", "12345678", "fffffff", "ffffffff", "-3",
                "3 ", " 3", "", ";")) {
            byte[] s = bytes(HEAD + line + "\r\nabc\r\n0\r\n\r\n");
            StepDownModel.check(s, new int[0]);
            StepDownModel.check(s, new int[] {HEAD.length() + 1});
        }
    }

    @Test
    void randomStreamsDecodeTheSame() {
        for (int seed = 0; seed < 2_000; seed++) {
            StepDownModel.check(new Random(seed));
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String hex(String s) {
        return java.util.HexFormat.of().formatHex(bytes(s));
    }
}
