package io.iqstream.server.cluster;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The nonces of one sending process seen here, as a sliding window over its counter: a nonce is taken once; one
 * more than {@link #SIZE} below the highest seen is refused as too old (the 30 s clock check refuses it soon
 * anyway). Bounded: {@link #SIZE} bits per sender, at most {@link Senders#MAX_SENDERS} senders (the oldest is
 * forgotten), so proof of the secret cannot be turned into memory use here.
 *
 * <p>Any thread: each window is guarded by its own monitor, taken once per peer request (never per event).
 */
final class ReplayWindow {
    /** Nonces remembered below the highest: enough for requests of one sender overtaking each other. */
    static final int SIZE = 1 << 16;

    private final long[] bits = new long[SIZE / 64];
    private long highest;

    /** Takes {@code n}: true the first time, false for a repeat or one too old. */
    synchronized boolean take(long n) {
        if (n <= 0) {
            return false;
        }
        if (n > highest) {
            if (n - highest >= SIZE) {
                java.util.Arrays.fill(bits, 0);
            } else {
                for (long i = highest + 1; i < n; i++) {
                    clear(i);
                }
            }
            highest = n;
            set(n);
            return true;
        }
        if (highest - n >= SIZE || isSet(n)) {
            return false;
        }
        set(n);
        return true;
    }

    private boolean isSet(long n) {
        int i = (int) (n & (SIZE - 1));
        return (bits[i >>> 6] & (1L << (i & 63))) != 0;
    }

    private void set(long n) {
        int i = (int) (n & (SIZE - 1));
        bits[i >>> 6] |= 1L << (i & 63);
    }

    private void clear(long n) {
        int i = (int) (n & (SIZE - 1));
        bits[i >>> 6] &= ~(1L << (i & 63));
    }

    /** The windows of every sending process, by sender and epoch. Any thread. */
    static final class Senders {
        static final int MAX_SENDERS = 256;

        private final Map<String, ReplayWindow> windows = new LinkedHashMap<>(16, 0.75f, false) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, ReplayWindow> eldest) {
                return size() > MAX_SENDERS;
            }
        };

        /** Whether {@code nonce} ({@code <epoch>-<counter>}) from {@code from} is used here for the first time. */
        boolean firstUse(String from, String nonce) {
            int dash = nonce.lastIndexOf('-');
            if (dash <= 0) {
                return false;
            }
            long n;
            try {
                n = Long.parseLong(nonce, dash + 1, nonce.length(), 10);
            } catch (NumberFormatException e) {
                return false;
            }
            ReplayWindow w;
            synchronized (windows) {
                w = windows.computeIfAbsent(from + " " + nonce.substring(0, dash), k -> new ReplayWindow());
            }
            return w.take(n);
        }
    }
}
