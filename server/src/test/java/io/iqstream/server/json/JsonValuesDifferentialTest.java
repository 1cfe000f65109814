package io.iqstream.server.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Holds {@link JsonValues} (the scanner that cuts a Durable Streams JSON append into messages) to Jackson's
 * streaming parser, which did that job before: the same verdict (well-formed or not) and the same value ranges,
 * byte for byte, for generated texts and mutations of them.
 */
class JsonValuesDifferentialTest {
    private static final JsonFactory JSON = new JsonFactory();
    private static final String[] SCALARS = {"0", "-0", "1", "-1", "12345678901234567890", "1.5", "-0.0", "1e10",
        "1E-7", "2.5e+3", "true", "false", "null", "\"\"", "\"a\"", "\"é€😀\"", "\"\\n\\t\\\"\\\\\\/\"",
        "\"\\u00e9\\uD83D\\uDE00\"", "\"\\ud800\"", "\"]\"", "\",\"", "\"}{\""};
    private static final String WS = " \n\r\t";
    private static final byte[] ALPHABET = "{}[],:\" \n0123456789-+.eEtrufalsn\\a".getBytes(StandardCharsets.US_ASCII);
    private int compared;
    private int accepted;

    @Test
    void agreesWithJacksonOnGeneratedAndMutatedTexts() {
        SplittableRandom random = new SplittableRandom(20261202L);
        for (int i = 0; i < 30_000; i++) {
            byte[] text = text(random);
            compare(text);
            for (int m = 0; m < 3; m++) {
                compare(mutate(random, text));
            }
        }
        assertTrue(accepted > compared / 10 && accepted < compared * 9 / 10,
                "the corpus must hold both well-formed and malformed texts: " + accepted + " of " + compared);
    }

    @Test
    void refusesIllFormedUtf8AndEmptyInput() {
        assertNull(ranges(new byte[] {'"', (byte) 0xC3, '"'}));
        assertNull(ranges(new byte[] {'[', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', ']'}));
        assertNull(ranges(new byte[0]));
        assertNull(ranges("  \n".getBytes(StandardCharsets.US_ASCII)));
        assertArrayEquals(new int[0], ranges(" [ ] ".getBytes(StandardCharsets.US_ASCII)));
        assertArrayEquals(new int[] {1, 2, 4, 8}, ranges("[1, [2 ]]".getBytes(StandardCharsets.US_ASCII)));
    }

    private void compare(byte[] text) {
        int[] expected = jackson(text);
        int[] actual = ranges(text);
        compared++;
        if (expected != null) {
            accepted++;
        }
        assertArrayEquals(expected, actual, () -> "for " + new String(text, StandardCharsets.UTF_8) + ": Jackson "
                + Arrays.toString(expected) + ", JsonValues " + Arrays.toString(actual));
    }

    private static int[] ranges(byte[] text) {
        return JsonValues.ranges(text, text.length);
    }

    private static byte[] text(SplittableRandom r) {
        StringBuilder s = new StringBuilder();
        ws(r, s);
        if (r.nextInt(4) == 0) {
            value(r, s, 3);
        } else {
            s.append('[');
            int n = r.nextInt(5);
            for (int i = 0; i < n; i++) {
                if (i > 0) {
                    s.append(',');
                }
                ws(r, s);
                value(r, s, 3);
                ws(r, s);
            }
            s.append(']');
        }
        ws(r, s);
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void ws(SplittableRandom r, StringBuilder s) {
        if (r.nextInt(3) == 0) {
            s.append(WS.charAt(r.nextInt(WS.length())));
        }
    }

    private static void value(SplittableRandom r, StringBuilder s, int depth) {
        int kind = r.nextInt(depth > 0 ? 6 : 4);
        if (kind < 4) {
            s.append(SCALARS[r.nextInt(SCALARS.length)]);
            return;
        }
        boolean array = kind == 4;
        s.append(array ? '[' : '{');
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                s.append(',');
            }
            ws(r, s);
            if (!array) {
                s.append("\"k").append(i).append("\":");
                ws(r, s);
            }
            value(r, s, depth - 1);
        }
        s.append(array ? ']' : '}');
    }

    private static byte[] mutate(SplittableRandom r, byte[] text) {
        byte[] b = text.clone();
        int at = b.length == 0 ? 0 : r.nextInt(b.length);
        return switch (r.nextInt(4)) {
            case 0 -> b.length == 0 ? b : concat(Arrays.copyOf(b, at), Arrays.copyOfRange(b, at + 1, b.length));
            case 1 -> concat(concat(Arrays.copyOf(b, at), new byte[] {ALPHABET[r.nextInt(ALPHABET.length)]}),
                    Arrays.copyOfRange(b, at, b.length));
            case 2 -> {
                if (b.length > 0 && b[at] >= 0) {
                    b[at] = ALPHABET[r.nextInt(ALPHABET.length)];
                }
                yield b;
            }
            default -> Arrays.copyOf(b, at);
        };
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    // --- the reference: how Durable Streams appends were cut with Jackson ---

    private static int[] jackson(byte[] body) {
        if (Utf8.firstInvalid(body, 0, body.length) >= 0) {
            return null; // a mutation may cut a multi-byte character: Jackson does not always check the bytes
        }
        try (JsonParser p = JSON.createParser(body, 0, body.length)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                return null;
            }
            int[] out = new int[8];
            int n = 0;
            if (t == JsonToken.START_ARRAY) {
                while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                    if (t == null) {
                        return null;
                    }
                    if (n + 2 > out.length) {
                        out = Arrays.copyOf(out, out.length * 2);
                    }
                    n = valueRange(p, body, out, n);
                }
            } else {
                n = valueRange(p, body, out, n);
            }
            if (p.nextToken() != null) {
                return null;
            }
            return Arrays.copyOf(out, n);
        } catch (IOException e) {
            return null;
        }
    }

    private static int valueRange(JsonParser p, byte[] body, int[] out, int n) throws IOException {
        int start = (int) p.currentTokenLocation().getByteOffset();
        if (p.currentToken().isStructStart()) {
            p.skipChildren();
        } else {
            p.finishToken();
        }
        int end = (int) p.currentLocation().getByteOffset();
        while (end > start && isJsonSpace(body[end - 1])) {
            end--;
        }
        if (!p.currentToken().isStructEnd()) {
            end = scalarEnd(body, start, end);
        }
        out[n] = start;
        out[n + 1] = end;
        return n + 2;
    }

    private static int scalarEnd(byte[] body, int start, int end) {
        if (body[start] == '"') {
            for (int i = start + 1; i < body.length; i++) {
                if (body[i] == '\\') {
                    i++;
                } else if (body[i] == '"') {
                    return i + 1;
                }
            }
            return end;
        }
        int i = start;
        while (i < body.length && !isJsonSpace(body[i]) && body[i] != ',' && body[i] != ']' && body[i] != '}') {
            i++;
        }
        return i;
    }

    private static boolean isJsonSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }
}
