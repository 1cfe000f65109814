package io.iqstream.server.cluster;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Rendezvous (highest-random-weight) hashing: the owner of a run id among members is the member with the highest
 * {@code mix(hash(runId), hash(member))}. Every node with the same member list picks the same owner; when a member
 * leaves, only its runs move (each to its own next choice), and a member that joins takes about 1/N of the ids.
 * Stateless, any thread.
 */
public final class Rendezvous {
    private Rendezvous() {}

    /** The owner of {@code runId} among {@code members}; null when there are none. */
    public static Member owner(String runId, List<Member> members) {
        long runHash = fnv64(runId);
        Member best = null;
        long bestWeight = 0;
        for (Member m : members) {
            long w = fmix64(runHash ^ fnv64(m.key()) * 0x9E3779B97F4A7C15L);
            if (best == null || Long.compareUnsigned(w, bestWeight) > 0
                    || w == bestWeight && m.compareTo(best) < 0) {
                best = m;
                bestWeight = w;
            }
        }
        return best;
    }

    static long fnv64(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** MurmurHash3's 64-bit finaliser: every input bit affects every output bit. */
    static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}
