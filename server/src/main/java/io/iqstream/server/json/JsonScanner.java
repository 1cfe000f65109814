package io.iqstream.server.json;

import com.fasterxml.jackson.core.StreamReadConstraints;
import java.util.Arrays;

/**
 * The JSON syntax half of {@code ingest/EventValidator} (and all of {@link JsonValues}): a strict RFC 8259 scanner
 * over well-formed UTF-8 bytes that builds nothing, with Jackson's default limits and token rules (see the
 * validator's implementation notes). The validator drives it member by member, reading the cursor
 * ({@link #bytes}, {@link #pos}, {@link #end}) in place; each {@code scan...} method takes one piece at {@link #pos} and returns
 * false with {@link #error} set when the piece is malformed. Reused for every event of its validator; confined to
 * its thread.
 */
public final class JsonScanner {
    /** Deepest nesting taken (the root object is level 1), as Jackson's default constraints. */
    static final int MAX_NESTING_DEPTH = StreamReadConstraints.DEFAULT_MAX_DEPTH;
    /** Most digits in a number (integer part, or integer + fraction + exponent), as Jackson's default. */
    static final int MAX_NUMBER_LENGTH = StreamReadConstraints.DEFAULT_MAX_NUM_LEN;
    /** Longest object member name in UTF-8 bytes after unescaping, as Jackson's default. */
    static final int MAX_NAME_BYTES = StreamReadConstraints.DEFAULT_MAX_NAME_LEN;

    /** Bit per nesting level: set where that level is an array. */
    private final long[] arrayLevels = new long[MAX_NESTING_DEPTH / 64 + 2];

    // The event being scanned: bytes[base, end), next byte at pos, open levels in depth.
    public byte[] bytes;
    private int base;
    public int pos;
    public int end;
    private int depth;
    // The last string scanned: its content bytes[stringStart, stringEnd), and whether it has escapes.
    private int stringStart;
    private int stringEnd;
    private boolean stringEscaped;
    /** Why the last scan failed. */
    public String error = "";

    /** Starts on {@code bytes[offset, offset + length)}. */
    public void reset(byte[] input, int offset, int length) {
        bytes = input;
        base = offset;
        pos = offset;
        end = offset + length;
        depth = 0;
    }

    /** Lets go of the input. */
    public void clear() {
        bytes = null;
    }

    /** Takes the root object's '{' at {@link #pos}. */
    public void openRootObject() {
        pos++;
        depth = 1;
        arrayLevels[0] = 0;
    }

    /** After a number at the root, Jackson wants the end or a space. */
    public boolean atRootSpace() {
        if (pos >= end) {
            return true;
        }
        byte c = bytes[pos];
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || fail("expected space after a root-level number");
    }

    /** A member name and its colon; leaves {@code pos} at the value (after whitespace). */
    public boolean scanName() {
        if (pos >= end || bytes[pos] != '"') {
            return fail(pos >= end ? "end of input inside the object" : "expected a quoted member name");
        }
        if (!scanString()) {
            return false;
        }
        if (stringEscaped && !pairedSurrogates()) {
            return false;
        }
        if (stringEnd - stringStart > MAX_NAME_BYTES
                && JsonEscapes.unescapedUtf8Length(bytes, stringStart, stringEnd) > MAX_NAME_BYTES) {
            return fail("member name longer than " + MAX_NAME_BYTES + " bytes");
        }
        skipWhitespace();
        if (pos >= end || bytes[pos] != ':') {
            return fail("expected ':' after a member name");
        }
        pos++;
        skipWhitespace();
        return true;
    }

    /**
     * Lexes the first token of a value as Jackson's {@code nextToken} does before its type is looked at: a whole
     * number or literal, only the bracket of an object or array, only the quote of a string.
     */
    public boolean scanTokenStart() {
        if (pos >= end) {
            return fail("end of input, expected a value");
        }
        byte c = bytes[pos];
        if (c == '{' || c == '[') {
            return depth < MAX_NESTING_DEPTH || fail("nesting deeper than " + MAX_NESTING_DEPTH);
        }
        if (c == '"') {
            return true;
        }
        if (c == '-' || c >= '0' && c <= '9') {
            return scanNumber();
        }
        if (c == 't' || c == 'f' || c == 'n') {
            return scanLiteral();
        }
        return fail("unexpected character, expected a value");
    }

    /** One whole value at {@code pos} (nested ones iteratively, with a bit per level). */
    public boolean scanValue() {
        final int outer = depth;
        while (true) {
            // Here a value starts.
            if (pos >= end) {
                return fail("end of input, expected a value");
            }
            byte c = bytes[pos];
            boolean opened = false;
            if (c == '{' || c == '[') {
                if (depth >= MAX_NESTING_DEPTH) {
                    return fail("nesting deeper than " + MAX_NESTING_DEPTH);
                }
                boolean array = c == '[';
                setArrayLevel(depth, array);
                depth++;
                pos++;
                skipWhitespace();
                if (pos < end && bytes[pos] == (array ? ']' : '}')) {
                    pos++;
                    depth--;
                } else if (array) {
                    continue;
                } else {
                    if (!scanName()) {
                        return false;
                    }
                    continue;
                }
                opened = true;
            }
            if (!opened) {
                boolean ok = c == '"' ? scanString()
                        : c == '-' || c >= '0' && c <= '9' ? scanNumber()
                        : c == 't' || c == 'f' || c == 'n' ? scanLiteral()
                        : fail("unexpected character, expected a value");
                if (!ok) {
                    return false;
                }
            }
            // Here a value ended: close levels until one continues.
            while (true) {
                if (depth == outer) {
                    return true;
                }
                skipWhitespace();
                if (pos >= end) {
                    return fail("end of input inside an object or array");
                }
                boolean array = isArrayLevel(depth - 1);
                byte d = bytes[pos];
                if (d == ',') {
                    pos++;
                    skipWhitespace();
                    if (!array && !scanName()) {
                        return false;
                    }
                    break;
                }
                if (d != (array ? ']' : '}')) {
                    return fail(array ? "expected ',' or ']'" : "expected ',' or '}'");
                }
                pos++;
                depth--;
            }
        }
    }

    private void setArrayLevel(int level, boolean array) {
        long bit = 1L << level;
        if (array) {
            arrayLevels[level >>> 6] |= bit;
        } else {
            arrayLevels[level >>> 6] &= ~bit;
        }
    }

    private boolean isArrayLevel(int level) {
        return (arrayLevels[level >>> 6] & 1L << level) != 0;
    }

    /** A string at {@code pos} (its opening quote); records its content span. */
    public boolean scanString() {
        final byte[] b = bytes;
        final int e = end;
        int p = pos + 1;
        boolean escaped = false;
        while (true) {
            if (p >= e) {
                return failAt(p, "end of input inside a string");
            }
            int c = b[p];
            if (c == '"') {
                break;
            }
            if (c == '\\') {
                escaped = true;
                if (p + 1 >= e) {
                    return failAt(p, "end of input inside an escape");
                }
                switch (b[p + 1]) {
                    case '"', '\\', '/', 'b', 'f', 'n', 'r', 't' -> p += 2;
                    case 'u' -> {
                        for (int i = p + 2; i < p + 6; i++) {
                            if (i >= e || JsonEscapes.hexValue(b[i]) < 0) {
                                return failAt(i, "expected a hex digit in a \\u escape");
                            }
                        }
                        p += 6;
                    }
                    default -> {
                        return failAt(p, "unrecognized escape");
                    }
                }
            } else if (c >= 0 && c < 0x20) {
                return failAt(p, "unescaped control character in a string");
            } else {
                p++;
            }
        }
        stringStart = pos + 1;
        stringEnd = p;
        stringEscaped = escaped;
        pos = p + 1;
        return true;
    }

    /** A number at {@code pos} per the JSON grammar, within Jackson's length limits. */
    public boolean scanNumber() {
        final byte[] b = bytes;
        int p = pos;
        if (b[p] == '-') {
            p++;
        }
        int intStart = p;
        if (p < end && b[p] == '0') {
            p++;
            if (p < end && isDigit(b[p])) {
                return failAt(p, "leading zeroes in a number");
            }
        } else {
            while (p < end && isDigit(b[p])) {
                p++;
            }
            if (p == intStart) {
                return failAt(p, "expected a digit");
            }
        }
        int digits = p - intStart;
        boolean floating = false;
        if (p < end && b[p] == '.') {
            floating = true;
            int from = ++p;
            while (p < end && isDigit(b[p])) {
                p++;
            }
            if (p == from) {
                return failAt(p, "decimal point not followed by a digit");
            }
            digits += p - from;
        }
        if (p < end && (b[p] == 'e' || b[p] == 'E')) {
            floating = true;
            p++;
            if (p < end && (b[p] == '+' || b[p] == '-')) {
                p++;
            }
            int from = p;
            while (p < end && isDigit(b[p])) {
                p++;
            }
            if (p == from) {
                return failAt(p, "exponent not followed by a digit");
            }
            digits += p - from;
        }
        if (digits > MAX_NUMBER_LENGTH) {
            return failAt(pos, (floating ? "number" : "integer") + " longer than " + MAX_NUMBER_LENGTH + " digits");
        }
        pos = p;
        return true;
    }

    /** {@code true}, {@code false} or {@code null}, not followed by an identifier character (Jackson's rule). */
    public boolean scanLiteral() {
        final byte[] b = bytes;
        byte first = b[pos];
        String word = first == 't' ? "true" : first == 'f' ? "false" : "null";
        int p = pos;
        for (int i = 0; i < word.length(); i++, p++) {
            if (p >= end || b[p] != word.charAt(i)) {
                return failAt(pos, "unrecognized token");
            }
        }
        if (p < end) {
            int ch = b[p] & 0xFF;
            // Jackson decodes a non-ASCII byte here for its message, takes the byte itself as its continuation and
            // fails: so a literal is followed by ASCII only.
            if (ch >= 0x80 || ch >= '0' && ch != ']' && ch != '}' && Character.isJavaIdentifierPart((char) ch)) {
                return failAt(pos, "unrecognized token");
            }
        }
        pos = p;
        return true;
    }

    public void skipWhitespace() {
        final byte[] b = bytes;
        int p = pos;
        while (p < end) {
            byte c = b[p];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                break;
            }
            p++;
        }
        pos = p;
    }

    /** Whether the last string, unescaped, is {@code target} (ASCII). */
    public boolean stringIs(byte[] target) {
        return stringEscaped ? JsonEscapes.equalsUnescaped(bytes, stringStart, stringEnd, target)
                : Arrays.equals(bytes, stringStart, stringEnd, target, 0, target.length);
    }

    /**
     * In a member name (not in a value), Jackson wants an escaped high surrogate followed at once by an escaped low
     * one, and no low surrogate alone.
     */
    private boolean pairedSurrogates() {
        int p = stringStart;
        while (p < stringEnd) {
            if (bytes[p] != '\\') {
                p++;
                continue;
            }
            int c = JsonEscapes.unescape(bytes, p);
            p += JsonEscapes.length(bytes, p);
            if (Character.isLowSurrogate((char) c)) {
                return failAt(p - 6, "unexpected low surrogate in a member name");
            }
            if (Character.isHighSurrogate((char) c)) {
                if (p + 1 >= stringEnd || bytes[p] != '\\' || bytes[p + 1] != 'u'
                        || !Character.isLowSurrogate((char) JsonEscapes.unescape(bytes, p))) {
                    return failAt(p, "broken surrogate pair in a member name");
                }
                p += 6;
            }
        }
        return true;
    }

    private static boolean isDigit(byte c) {
        return c >= '0' && c <= '9';
    }

    public boolean fail(String what) {
        return failAt(pos, what);
    }

    private boolean failAt(int at, String what) {
        error = "malformed JSON: " + what + " at byte " + (at - base) + " of the event";
        return false;
    }
}
