package io.iqstream.server.json;

import io.netty.util.concurrent.FastThreadLocal;
import java.util.Arrays;

/**
 * Where the values of one JSON text lie: a top-level array's elements (one level flattened) or the one value it
 * is, as {@code [start, end)} byte pairs of the input, each exactly as sent. The syntax is {@code ingest/EventValidator}'s
 * (strict RFC 8259 over well-formed UTF-8, with Jackson's default limits), checked by the same scanner, which
 * builds nothing: no parser, token or string per value. Any thread (a scanner per thread).
 */
public final class JsonValues {
    private static final FastThreadLocal<JsonScanner> SCANNERS = new FastThreadLocal<>() {
        @Override
        protected JsonScanner initialValue() {
            return new JsonScanner();
        }
    };
    private static final int[] NONE = new int[0];

    private JsonValues() {
    }

    /**
     * The ranges of {@code bytes[0, length)}'s values: an array's elements (none for {@code []}), else the value;
     * null when it is not one well-formed JSON value (surrounding whitespace allowed).
     */
    public static int[] ranges(byte[] bytes, int length) {
        if (Utf8.firstInvalid(bytes, 0, length) >= 0) {
            return null;
        }
        JsonScanner scan = SCANNERS.get();
        scan.reset(bytes, 0, length);
        try {
            return ranges(scan);
        } finally {
            scan.clear();
        }
    }

    private static int[] ranges(JsonScanner scan) {
        scan.skipWhitespace();
        if (scan.pos >= scan.end) {
            return null;
        }
        if (scan.bytes[scan.pos] != '[') {
            int start = scan.pos;
            if (!scan.scanValue()) {
                return null;
            }
            int end = scan.pos;
            return atEnd(scan) ? new int[] {start, end} : null;
        }
        scan.pos++;
        scan.skipWhitespace();
        if (scan.pos < scan.end && scan.bytes[scan.pos] == ']') {
            scan.pos++;
            return atEnd(scan) ? NONE : null;
        }
        int[] out = new int[8];
        int n = 0;
        while (true) {
            int start = scan.pos;
            if (!scan.scanValue()) {
                return null;
            }
            if (n + 2 > out.length) {
                out = Arrays.copyOf(out, out.length * 2);
            }
            out[n++] = start;
            out[n++] = scan.pos;
            scan.skipWhitespace();
            if (scan.pos >= scan.end) {
                return null;
            }
            byte c = scan.bytes[scan.pos++];
            if (c == ']') {
                return atEnd(scan) ? Arrays.copyOf(out, n) : null;
            }
            if (c != ',') {
                return null;
            }
            scan.skipWhitespace();
        }
    }

    private static boolean atEnd(JsonScanner scan) {
        scan.skipWhitespace();
        return scan.pos == scan.end;
    }
}
