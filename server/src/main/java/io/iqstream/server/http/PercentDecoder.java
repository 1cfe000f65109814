package io.iqstream.server.http;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Strict percent-decoding of one part of a request target (a path segment, a query name or value). Unlike
 * Netty's {@code QueryStringDecoder}, which throws on a bad escape and replaces invalid UTF-8, it answers null for
 * anything that is not a well-formed target: a {@code %} not followed by two hex digits, a raw byte outside
 * printable ASCII, or escapes that decode to invalid UTF-8. The caller answers 400. Stateless; any thread.
 */
public final class PercentDecoder {
    private PercentDecoder() {}

    /** Decodes {@code text}; {@code plusIsSpace} for query names and values. Null when malformed. */
    public static String decode(String text, boolean plusIsSpace) {
        return decode(text, 0, text.length(), plusIsSpace);
    }

    /** Decodes {@code text[from, to)}; null when malformed. */
    public static String decode(String text, int from, int to, boolean plusIsSpace) {
        boolean plain = true;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return null;
            }
            if (c == '%' || plusIsSpace && c == '+') {
                plain = false;
            }
        }
        if (plain) {
            return text.substring(from, to);
        }
        byte[] bytes = new byte[to - from];
        int n = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c == '%') {
                if (i + 2 >= to) {
                    return null;
                }
                int hi = Character.digit(text.charAt(i + 1), 16);
                int lo = Character.digit(text.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                bytes[n++] = (byte) (hi << 4 | lo);
                i += 2;
            } else {
                bytes[n++] = (byte) (plusIsSpace && c == '+' ? ' ' : c);
            }
        }
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, 0, n));
            return chars.toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
