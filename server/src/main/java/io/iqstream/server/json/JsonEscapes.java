package io.iqstream.server.json;

/**
 * The escapes of a JSON string that {@link JsonScanner} has already checked well-formed: what one stands for,
 * and a string's text compared or measured as if unescaped, without building it. Stateless.
 */
final class JsonEscapes {
    private JsonEscapes() {
    }

    /** Whether the escaped string content {@code b[start, end)}, unescaped, is {@code target} (ASCII). */
    static boolean equalsUnescaped(byte[] b, int start, int end, byte[] target) {
        int t = 0;
        int p = start;
        while (p < end) {
            int c = b[p];
            if (c == '\\') {
                c = unescape(b, p);
                p += length(b, p);
            } else {
                p++;
            }
            if (t >= target.length || target[t] != c) {
                return false;
            }
            t++;
        }
        return t == target.length;
    }

    /**
     * Length in UTF-8 bytes of the string content {@code b[start, end)} unescaped (an escaped surrogate pair is 4),
     * as Jackson counts.
     */
    static int unescapedUtf8Length(byte[] b, int start, int end) {
        int n = 0;
        int p = start;
        while (p < end) {
            if (b[p] == '\\') {
                int c = unescape(b, p);
                p += length(b, p);
                n += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate((char) c) ? 2 : 3;
            } else {
                p++;
                n++;
            }
        }
        return n;
    }

    /** Bytes the (well-formed) escape at {@code b[p]} takes: 6 for a u escape (four hex digits), else 2. */
    static int length(byte[] b, int p) {
        return b[p + 1] == 'u' ? 6 : 2;
    }

    /** The UTF-16 unit of the (well-formed) escape at {@code b[p]}. */
    static int unescape(byte[] b, int p) {
        return switch (b[p + 1]) {
            case 'b' -> '\b';
            case 'f' -> '\f';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case 'u' -> hexValue(b[p + 2]) << 12 | hexValue(b[p + 3]) << 8 | hexValue(b[p + 4]) << 4
                    | hexValue(b[p + 5]);
            default -> b[p + 1];
        };
    }

    /** The value of a hex digit, or -1. */
    static int hexValue(byte c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
