package io.iqstream.server.auth;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A bounded cache of verified tokens, token text to rights and expiry, so that a reconnect storm
 * does not verify the same signatures again.
 *
 * <p>Implementation notes. A two-way set-associative table of exactly {@code capacity} slots:
 * a token may live in the slot its hash picks or the next one. A lookup reads those two slots
 * and compares the token text (never the hash alone: a collision must not lend one token's
 * rights to another), so a hit allocates nothing and takes no lock. An insert takes a free, a
 * stale or the same token's slot, else replaces whichever of the two expires first: the table
 * never grows and nothing scans it. Entries are immutable and published with a volatile
 * write; two threads inserting into one set at once may lose one insert, which only costs a
 * later re-verification. An entry is never returned at or after its expiry, nor once the key that
 * verified it has been retired from a refreshed key set (one volatile read per hit).
 *
 * <p>Any thread, lock-free.
 */
final class TokenCache {

    private static final class Entry {
        final String token;
        final Rights rights;
        final long expiresAtMs;
        final VerificationKey key;

        Entry(String token, Rights rights, long expiresAtMs, VerificationKey key) {
            this.token = token;
            this.rights = rights;
            this.expiresAtMs = expiresAtMs;
            this.key = key;
        }
    }

    private final AtomicReferenceArray<Entry> slots;
    private final int capacity;

    /** @param capacity the most tokens held, at least 1 */
    TokenCache(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("token cache capacity must be at least 1, not " + capacity);
        }
        this.capacity = capacity;
        this.slots = new AtomicReferenceArray<>(capacity);
    }

    /** The cached rights of {@code token}, or null when it is not cached or expired at {@code nowMs}. */
    Rights get(String token, long nowMs) {
        int first = firstSlot(token);
        Entry e = slots.get(first);
        if (e == null || !e.token.equals(token)) {
            e = slots.get(nextSlot(first));
            if (e == null || !e.token.equals(token)) {
                return null;
            }
        }
        return nowMs < e.expiresAtMs && (e.key == null || !e.key.isRetired()) ? e.rights : null;
    }

    /** As {@link #put(String, Rights, long, VerificationKey, long)} for a token whose key never retires. */
    void put(String token, Rights rights, long expiresAtMs, long nowMs) {
        put(token, rights, expiresAtMs, null, nowMs);
    }

    /**
     * Caches a verified token's rights until {@code expiresAtMs} or until {@code key} (null: a key that
     * never changes) is retired, evicting another entry of its set if need be.
     */
    void put(String token, Rights rights, long expiresAtMs, VerificationKey key, long nowMs) {
        int first = firstSlot(token);
        int second = nextSlot(first);
        Entry a = slots.get(first);
        Entry b = slots.get(second);
        int target;
        if (a != null && a.token.equals(token)) {
            target = first;
        } else if (b != null && b.token.equals(token)) {
            target = second;
        } else if (isFree(a, nowMs)) {
            target = first;
        } else if (isFree(b, nowMs)) {
            target = second;
        } else {
            target = a.expiresAtMs <= b.expiresAtMs ? first : second;
        }
        slots.set(target, new Entry(token, rights, expiresAtMs, key));
    }

    /** How many slots hold an entry (stale ones included); for tests and metrics, O(capacity). */
    int occupiedSlots() {
        int n = 0;
        for (int i = 0; i < capacity; i++) {
            if (slots.get(i) != null) {
                n++;
            }
        }
        return n;
    }

    private static boolean isFree(Entry e, long nowMs) {
        return e == null || nowMs >= e.expiresAtMs || e.key != null && e.key.isRetired();
    }

    private int firstSlot(String token) {
        int h = token.hashCode();
        return Integer.remainderUnsigned(h ^ (h >>> 16), capacity);
    }

    private int nextSlot(int slot) {
        return slot + 1 == capacity ? 0 : slot + 1;
    }
}
