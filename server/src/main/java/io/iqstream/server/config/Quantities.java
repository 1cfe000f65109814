package io.iqstream.server.config;

import java.util.Locale;

/**
 * Parses the durations ({@code 250ms}, {@code 60s}, {@code 5m}) and byte sizes ({@code 512k}, {@code 1m},
 * {@code 2g}) that flags take. Stateless; any thread.
 */
public final class Quantities {
    private Quantities() {}

    /** A duration in milliseconds; a bare number means milliseconds. */
    public static long parseDurationMs(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long factor;
        String digits;
        if (t.endsWith("ms")) {
            factor = 1;
            digits = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            factor = 1_000;
            digits = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            factor = 60_000;
            digits = t.substring(0, t.length() - 1);
        } else if (t.endsWith("h")) {
            factor = 3_600_000;
            digits = t.substring(0, t.length() - 1);
        } else {
            factor = 1;
            digits = t;
        }
        return scaled(parseNonNegative(digits, text, "a duration such as 250ms, 60s or 5m"), factor, text);
    }

    /** A size in bytes; suffixes k, m, g (powers of 1024), optional trailing b. */
    public static long parseBytes(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ib")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("b") && t.length() > 1 && !Character.isDigit(t.charAt(t.length() - 2))) {
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        long factor = 1;
        char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
        switch (last) {
            case 'k' -> factor = 1L << 10;
            case 'm' -> factor = 1L << 20;
            case 'g' -> factor = 1L << 30;
            default -> { }
        }
        String digits = factor == 1 ? t : t.substring(0, t.length() - 1);
        return scaled(parseNonNegative(digits, text, "a size such as 512k, 1m or 2g"), factor, text);
    }

    private static long scaled(long value, long factor, String original) {
        try {
            return Math.multiplyExact(value, factor);
        } catch (ArithmeticException e) {
            throw new ConfigException("'" + original + "' is too large");
        }
    }

    private static long parseNonNegative(String digits, String original, String expected) {
        try {
            long v = Long.parseLong(digits.trim());
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new ConfigException("'" + original + "' is not " + expected);
        }
    }

    /** Renders milliseconds the way flags are written. */
    public static String formatDurationMs(long ms) {
        if (ms % 60_000 == 0 && ms >= 60_000) {
            return (ms / 60_000) + "m";
        }
        if (ms % 1_000 == 0 && ms >= 1_000) {
            return (ms / 1_000) + "s";
        }
        return ms + "ms";
    }

    /** Renders bytes the way flags are written. */
    public static String formatBytes(long bytes) {
        if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + "g";
        }
        if (bytes >= 1L << 20 && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + "m";
        }
        if (bytes >= 1L << 10 && bytes % (1L << 10) == 0) {
            return (bytes >> 10) + "k";
        }
        return Long.toString(bytes);
    }
}
