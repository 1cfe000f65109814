package io.iqstream.server.json;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Well-formed UTF-8 as Unicode defines it (Table 3-7): no overlong forms ({@code C0 8A}), no surrogates
 * ({@code ED A0 80}), nothing above U+10FFFF, no truncated sequence. Checked in place over a byte array, eight ASCII
 * bytes at a time; no allocation. Stateless, any thread.
 */
public final class Utf8 {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final long HIGH_BITS = 0x8080808080808080L;

    private Utf8() {
    }

    /** Index of the first byte of the first ill-formed sequence in {@code bytes[from, from + length)}, or -1. */
    public static int firstInvalid(byte[] bytes, int from, int length) {
        int i = from;
        int end = from + length;
        while (i < end) {
            while (i + 8 <= end && ((long) LONGS.get(bytes, i) & HIGH_BITS) == 0) {
                i += 8;
            }
            if (i >= end) {
                break;
            }
            int c = bytes[i];
            if (c >= 0) {
                i++;
                continue;
            }
            c &= 0xFF;
            if (c < 0xC2) {
                return i; // a continuation byte out of place, or an overlong two-byte form
            }
            if (c < 0xE0) {
                if (i + 1 >= end || !continuation(bytes[i + 1])) {
                    return i;
                }
                i += 2;
            } else if (c < 0xF0) {
                if (i + 2 >= end) {
                    return i;
                }
                int c1 = bytes[i + 1] & 0xFF;
                boolean ok = c == 0xE0 ? c1 >= 0xA0 && c1 <= 0xBF
                        : c == 0xED ? c1 >= 0x80 && c1 <= 0x9F
                        : c1 >= 0x80 && c1 <= 0xBF;
                if (!ok || !continuation(bytes[i + 2])) {
                    return i;
                }
                i += 3;
            } else if (c < 0xF5) {
                if (i + 3 >= end) {
                    return i;
                }
                int c1 = bytes[i + 1] & 0xFF;
                boolean ok = c == 0xF0 ? c1 >= 0x90 && c1 <= 0xBF
                        : c == 0xF4 ? c1 >= 0x80 && c1 <= 0x8F
                        : c1 >= 0x80 && c1 <= 0xBF;
                if (!ok || !continuation(bytes[i + 2]) || !continuation(bytes[i + 3])) {
                    return i;
                }
                i += 4;
            } else {
                return i;
            }
        }
        return -1;
    }

    private static boolean continuation(byte b) {
        return (b & 0xC0) == 0x80;
    }
}
