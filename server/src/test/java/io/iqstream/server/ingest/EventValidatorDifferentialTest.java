package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Holds {@link EventValidator}'s scanner to Jackson's streaming parser ({@link JacksonEventReference}): the same
 * {@link EventCheck} (so the same accept/refuse and terminal verdicts) for generated events, for mutations of them,
 * and for the edges of Jackson's limits and token rules.
 */
class EventValidatorDifferentialTest {
    private final EventValidator validator = new EventValidator();
    private int compared;
    private int accepted;

    @Test
    void agreesWithJacksonOnGeneratedAndMutatedEvents() {
        SplittableRandom random = new SplittableRandom(20261130L);
        for (int i = 0; i < 40_000; i++) {
            byte[] event = event(random);
            compare(event);
            for (int m = 0; m < 4; m++) {
                compare(mutate(random, event));
            }
        }
        System.out.println("EventValidatorDifferentialTest: " + compared + " inputs, " + accepted + " accepted");
        assertTrue(accepted > compared / 10 && accepted < compared * 9 / 10,
                "the corpus must hold both valid and invalid events: " + accepted + " of " + compared);
    }

    @Test
    void agreesOnJacksonsLimits() {
        for (int depth : new int[] {998, 999, 1000, 1001, 1200}) {
            compare(nested(depth, "{\"a\":", "}"));
            compare(nested(depth, "[", "]"));
            compare(nested(depth, "{\"a\":[", "]}"));
        }
        for (int digits : new int[] {999, 1000, 1001}) {
            String n = "1".repeat(digits);
            for (String number : new String[] {n, "-" + n, n + ".5", "1." + n.substring(1), "1e" + n.substring(1),
                "0." + n.substring(1), n.substring(2) + ".1e1", n.substring(1) + "E+1"}) {
                compare(("{\"type\":\"X\",\"n\":" + number + "}").getBytes(StandardCharsets.UTF_8));
                compare(("{\"type\":" + number + "}").getBytes(StandardCharsets.UTF_8));
                compare((number).getBytes(StandardCharsets.UTF_8));
            }
        }
        for (int length : new int[] {49_999, 50_000, 50_001}) {
            compare(("{\"type\":\"X\",\"" + "n".repeat(length) + "\":1}").getBytes(StandardCharsets.UTF_8));
            compare(("{\"type\":\"X\",\"" + "é".repeat(length / 2) + "n".repeat(length % 2) + "\":1}")
                    .getBytes(StandardCharsets.UTF_8));
            compare(("{\"type\":\"X\",\"" + "\\u0041".repeat(length) + "\":1}").getBytes(StandardCharsets.UTF_8));
            compare(("{\"type\":\"X\",\"" + "\\u00e9".repeat(length / 2) + "\":1}")
                    .getBytes(StandardCharsets.UTF_8));
            compare(("{\"type\":\"X\",\"" + "\\u20ac".repeat(length / 3) + "a".repeat(length % 3) + "\":1}")
                    .getBytes(StandardCharsets.UTF_8));
            compare(("{\"type\":\"X\",\"o\":{\"" + "n".repeat(length) + "\":1}}").getBytes(StandardCharsets.UTF_8));
        }
        System.out.println("EventValidatorDifferentialTest limits: " + compared + " inputs");
    }

    @Test
    void agreesOnWhatMayFollowATokenAndOnTheOrderOfVerdicts() {
        List<String> follow = new ArrayList<>();
        for (int c = 0; c < 0x80; c++) {
            follow.add(String.valueOf((char) c));
        }
        for (int cp : new int[] {0xA0, 0xAA, 0xB5, 0x660, 0x2028, 0x3000, 0xFEFF, 0x1F600, 0x10400, 0x1D7CE}) {
            follow.add(new String(Character.toChars(cp)));
        }
        String[] shapes = {"%s", "{\"type\":\"X\",\"a\":%s}", "{\"type\":%s}", "{\"type\":\"X\",\"type\":%s}",
            "{\"a\":[%s]}", "{\"type\":%s,\"type\":\"Y\"}", "{%s\"type\":\"X\"}", "{\"type\":\"X\"}%s",
            "{\"type\":\"X\"%s}", "{\"type\"%s:\"X\"}", "{\"type\":\"X\",\"s\":\"%s\"}", "{\"type\":\"%s\"}"};
        String[] tokens = {"true", "false", "null", "1", "-0", "0", "1.5", "2e3", "-7E-2", "{}", "[]", "\"s\"",
            "tru", "nul", "-", "1.", "1e", "01", "\"\\x\"", "\"\\u12\"", "\"a\\\"b\"", ""};
        for (String shape : shapes) {
            for (String token : tokens) {
                for (String f : follow) {
                    compare(String.format(shape, token + f).getBytes(StandardCharsets.UTF_8));
                }
            }
        }
        for (String type : new String[] {"RUN_FINISHED", "RUN_ERROR", "RUN_\\u0046INISHED", "\\u0052UN_ERROR",
            "RUN_ERRO\\u0052", "RUN_ERRORS", "RUN_ERRO", "run_error", "RUN_FINISHED\\u0000", "RUN\\/ERROR",
            "\\ud800", "\\udc00\\ud800", "\\uD83D\\uDE00", "é", "RUN_FINISHED\\n"}) {
            compare(("{\"type\":\"" + type + "\"}").getBytes(StandardCharsets.UTF_8));
            compare(("{\"typ\\u0065\":\"" + type + "\"}").getBytes(StandardCharsets.UTF_8));
            compare(("{\"\\u0074ype\":\"" + type + "\",\"t\\u0079pe\":1}").getBytes(StandardCharsets.UTF_8));
        }
        System.out.println("EventValidatorDifferentialTest tokens: " + compared + " inputs");
    }

    @Test
    void refusesWhatJacksonWouldDecodeAsUtf16OrSkipAsAByteOrderMark() {
        byte[] utf16 = "{\"type\":\"X\"}".getBytes(StandardCharsets.UTF_16BE);
        assertEquals(EventCheck.BAD_JSON, check(utf16));
        assertEquals(EventCheck.BAD_JSON, check("\uFEFF{\"type\":\"X\"}".getBytes(StandardCharsets.UTF_8)));
        assertEquals(EventCheck.BAD_JSON, check("{\"type\":\"X\"}\u0000".getBytes(StandardCharsets.UTF_8)));
    }

    private EventCheck check(byte[] json) {
        ByteBuf heap = Unpooled.wrappedBuffer(json);
        try {
            return validator.check(heap);
        } finally {
            heap.release();
        }
    }

    @AfterEach
    void release() {
        heap.release();
        direct.release();
    }

    /** Reused for every input (a buffer per input would cost the leak detector's tracking each time). */
    private final ByteBuf heap = Unpooled.buffer(1 << 16);
    private final ByteBuf direct = Unpooled.directBuffer(1 << 16);

    private void compare(byte[] json) {
        EventCheck expected = JacksonEventReference.check(json);
        heap.clear().writerIndex(3).readerIndex(3).writeBytes(json);
        direct.clear().writeBytes(json);
        EventCheck onHeap = validator.check(heap);
        if (onHeap != expected) {
            throw new AssertionError("validator " + onHeap + " (" + validator.lastError() + "), Jackson "
                    + expected + ", for " + JacksonEventReference.show(json));
        }
        assertEquals(expected, validator.check(direct), () -> "direct buffer: " + JacksonEventReference.show(json));
        compared++;
        if (expected == EventCheck.OK || expected == EventCheck.OK_TERMINAL) {
            accepted++;
        }
    }

    private static byte[] nested(int depth, String open, String close) {
        StringBuilder s = new StringBuilder("{\"type\":\"X\",\"d\":");
        s.append(open.repeat(depth - 1)).append("1").append(close.repeat(depth - 1)).append('}');
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    // --- generation ---

    private static final String[] TYPES = {"TEXT_MESSAGE_CONTENT", "RUN_FINISHED", "RUN_ERROR", "RUN_STARTED",
        "RUN_\\u0046INISHED", "STATE_DELTA", "", "type"};
    private static final String[] STRINGS = {"", "a", "hi there", "é€😀", "\\n\\t\\\"\\\\\\/", "\\u00e9\\uD83D\\uDE00",
        "\\ud800", "\\b\\f\\r", "type", "RUN_ERROR", "\u007f", "<>&'"};
    private static final String[] NUMBERS = {"0", "-0", "1", "-1", "12345678901234567890", "1.5", "-0.0", "1e10",
        "1E-7", "2.5e+3", "0.000001", "-9.99E99"};

    private static byte[] event(SplittableRandom r) {
        StringBuilder s = new StringBuilder();
        String ws = r.nextInt(4) == 0 ? " \n" : "";
        s.append(ws).append('{');
        int members = r.nextInt(5);
        int typeAt = r.nextInt(10) == 0 ? -1 : r.nextInt(members + 1);
        boolean first = true;
        for (int i = 0; i <= members; i++) {
            if (!first) {
                s.append(',').append(ws);
            }
            first = false;
            if (i == typeAt) {
                s.append(r.nextInt(8) == 0 ? "\"typ\\u0065\"" : "\"type\"").append(ws).append(':');
                s.append(r.nextInt(12) == 0 ? NUMBERS[r.nextInt(NUMBERS.length)]
                        : "\"" + TYPES[r.nextInt(TYPES.length)] + "\"");
            } else {
                s.append('"').append(r.nextInt(10) == 0 ? "type" : "k" + i).append("\":").append(ws);
                value(r, s, r.nextInt(4));
            }
        }
        s.append('}').append(ws);
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void value(SplittableRandom r, StringBuilder s, int depth) {
        int kind = r.nextInt(depth > 0 ? 8 : 6);
        switch (kind) {
            case 0, 1 -> s.append('"').append(STRINGS[r.nextInt(STRINGS.length)]).append('"');
            case 2, 3 -> s.append(NUMBERS[r.nextInt(NUMBERS.length)]);
            case 4 -> s.append(r.nextBoolean() ? "true" : r.nextBoolean() ? "false" : "null");
            case 5 -> s.append(r.nextBoolean() ? "{}" : "[]");
            case 6 -> {
                s.append('[');
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        s.append(", ");
                    }
                    value(r, s, depth - 1);
                }
                s.append(']');
            }
            default -> {
                s.append('{');
                int n = r.nextInt(4);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        s.append(',');
                    }
                    s.append("\"").append(STRINGS[r.nextInt(STRINGS.length)]).append("\" : ");
                    value(r, s, depth - 1);
                }
                s.append('}');
            }
        }
    }

    private static final byte[] ALPHABET = "{}[]\",:\\/ u0123456789aefAEF+-.truefalsenull\t\n\r\u0000x'#"
            .getBytes(StandardCharsets.UTF_8);

    private static byte[] mutate(SplittableRandom r, byte[] event) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(event);
        byte[] b = event;
        int edits = 1 + r.nextInt(3);
        for (int e = 0; e < edits; e++) {
            int at = b.length == 0 ? 0 : r.nextInt(b.length);
            out.reset();
            switch (r.nextInt(6)) {
                case 0 -> { // delete
                    out.write(b, 0, at);
                    out.write(b, Math.min(at + 1, b.length), b.length - Math.min(at + 1, b.length));
                }
                case 1 -> { // insert
                    out.write(b, 0, at);
                    out.write(ALPHABET[r.nextInt(ALPHABET.length)]);
                    out.write(b, at, b.length - at);
                }
                case 2 -> { // replace
                    out.write(b, 0, b.length);
                    byte[] c = out.toByteArray();
                    if (c.length > 0) {
                        c[at] = ALPHABET[r.nextInt(ALPHABET.length)];
                    }
                    out.reset();
                    out.write(c, 0, c.length);
                }
                case 3 -> out.write(b, 0, at); // truncate
                case 4 -> { // repeat a slice
                    int len = b.length == 0 ? 0 : r.nextInt(Math.min(12, b.length - at) + 1);
                    out.write(b, 0, at + len);
                    out.write(b, at, b.length - at);
                }
                default -> { // a random byte, UTF-8 or not
                    out.write(b, 0, at);
                    out.write(r.nextInt(256));
                    out.write(b, at, b.length - at);
                }
            }
            b = out.toByteArray();
        }
        return b;
    }
}
