package io.iqstream.server.run;

import java.util.LinkedHashMap;

/**
 * The idempotent producers of one byte log: per producer id, its epoch and the last sequence number accepted, and
 * the rules that decide a producer's append from its (id, epoch, seq) — as a {@link Verdict}, which the protocol
 * turns into its answer. An append is {@link #check checked} first, stored, and only then {@link #accept accepted},
 * so one refused later (over budget, too large, malformed) leaves the ledger as it was and its retry is not taken
 * for a duplicate.
 *
 * <p>At most {@link #MAX_PRODUCERS} producers are remembered. A producer is never forgotten while it may still be
 * retrying: a new one past the bound makes the ledger forget the one least recently accepted only when that one has
 * been silent for {@link #FORGET_AFTER_MS} (as Kafka forgets an idle producer id); otherwise the new producer is
 * refused ({@link Verdict#TOO_MANY_PRODUCERS}). So a stale epoch is always fenced off and a retried append is never
 * stored twice, however many other producers write to the log. A forgotten producer's next append with a sequence
 * number above 0 is a {@link Verdict#SEQUENCE_GAP} (expected 0). The ledger also remembers which producer append
 * closed the log, so that the retry of a closing append is answered as a success.
 *
 * <p>Confined to its stream's owner worker; holds no table until its first producer.
 */
public final class ProducerLedger {
    /** Producers remembered per log; past it the least recently accepted is forgotten. */
    public static final int MAX_PRODUCERS = 1024;
    /** How long a producer must have been silent before a new one past {@link #MAX_PRODUCERS} may displace it. */
    public static final long FORGET_AFTER_MS = 7L * 24 * 3600 * 1000;
    /**
     * Heap a remembered producer takes besides its id's characters: its map entry, its (epoch, seq) object and the
     * id string's own object and array headers.
     */
    public static final long PRODUCER_OVERHEAD_BYTES = 128;

    /** What a producer's append is, by the ledger's rules. */
    public enum Verdict {
        /** The producer's next append (seq 0 of a new producer or a new epoch, or the last seq + 1): store it. */
        APPEND,
        /** This epoch's seq was accepted already ({@link #lastSeq} is the last one): nothing to store. */
        DUPLICATE,
        /** A seq skipped: {@link #expectedSeq} is the one due. */
        SEQUENCE_GAP,
        /** An epoch below the producer's current one ({@link #epoch}): a fenced-off writer. */
        STALE_EPOCH,
        /** A known producer's new epoch whose first seq is not 0. */
        NEW_EPOCH_NOT_AT_ZERO,
        /** A new producer while {@link #MAX_PRODUCERS} are remembered and none has been silent long enough to go. */
        TOO_MANY_PRODUCERS
    }

    /** One producer's last accepted (epoch, seq). */
    private static final class Producer {
        long epoch;
        long lastSeq;
        long lastAcceptedMs;
    }

    /** In order of last acceptance, least recent first. */
    private LinkedHashMap<String, Producer> producers;
    /** The producer append (id, epoch, seq) that closed the log, or null. */
    private String closedById;
    private long closedByEpoch;
    private long closedBySeq;
    private long heldBytes;

    /** What an append of producer {@code id} at ({@code epoch}, {@code seq}) is at {@code nowMs}; changes nothing. */
    public Verdict check(String id, long epoch, long seq, long nowMs) {
        Producer p = find(id);
        if (p == null && seq == 0 && !roomForNew(nowMs)) {
            return Verdict.TOO_MANY_PRODUCERS;
        }
        if (p != null && epoch < p.epoch) {
            return Verdict.STALE_EPOCH;
        }
        boolean fresh = p == null || epoch > p.epoch;
        if (fresh) {
            if (seq == 0) {
                return Verdict.APPEND;
            }
            return p == null ? Verdict.SEQUENCE_GAP : Verdict.NEW_EPOCH_NOT_AT_ZERO;
        }
        if (seq <= p.lastSeq) {
            return Verdict.DUPLICATE;
        }
        return seq == p.lastSeq + 1 ? Verdict.APPEND : Verdict.SEQUENCE_GAP;
    }

    /**
     * Records that the append {@code id} ({@code epoch}, {@code seq}) was stored at {@code nowMs} (after
     * {@link #check} said {@link Verdict#APPEND}): the producer becomes the most recently active, and a new one past
     * {@link #MAX_PRODUCERS} makes the least recently active (silent for {@link #FORGET_AFTER_MS}, as the check
     * found) forgotten. Returns the change in {@link #heldBytes}.
     */
    public long accept(String id, long epoch, long seq, long nowMs) {
        if (producers == null) {
            producers = new LinkedHashMap<>(4);
        }
        long change = 0;
        Producer p = producers.get(id);
        if (p == null) {
            if (producers.size() >= MAX_PRODUCERS) {
                change -= bytesFor(producers.pollFirstEntry().getKey());
            }
            p = new Producer();
            change += bytesFor(id);
        }
        p.epoch = epoch;
        p.lastSeq = seq;
        p.lastAcceptedMs = nowMs;
        producers.putLast(id, p);
        heldBytes += change;
        return change;
    }

    /**
     * What remembering a new producer {@code id} costs (its characters, two bytes each at most, and {@link
     * #PRODUCER_OVERHEAD_BYTES}): the caller charges it to the memory budget before {@link #accept}ing one, since
     * a stranger picks the ids and their length (up to the request head's limit, 8 KiB each).
     */
    public static long bytesFor(String id) {
        return 2L * id.length() + PRODUCER_OVERHEAD_BYTES;
    }

    /** Whether {@code id} is remembered (so accepting its append adds no producer). */
    public boolean knows(String id) {
        return find(id) != null;
    }

    /** What the remembered producers cost ({@link #bytesFor} each). */
    public long heldBytes() {
        return heldBytes;
    }

    /** The producer's current epoch, or -1 when it is not remembered. */
    public long epoch(String id) {
        Producer p = find(id);
        return p == null ? -1 : p.epoch;
    }

    /** The producer's last accepted seq in its current epoch, or -1 when it is not remembered. */
    public long lastSeq(String id) {
        Producer p = find(id);
        return p == null ? -1 : p.lastSeq;
    }

    /** The seq due next from the producer in its current epoch: 0 when it is not remembered. */
    public long expectedSeq(String id) {
        Producer p = find(id);
        return p == null ? 0 : p.lastSeq + 1;
    }

    /** Producers remembered. */
    public int size() {
        return producers == null ? 0 : producers.size();
    }

    /** Records that the producer append {@code id} ({@code epoch}, {@code seq}) closed the log. */
    public void recordClosingAppend(String id, long epoch, long seq) {
        closedById = id;
        closedByEpoch = epoch;
        closedBySeq = seq;
    }

    /** Whether {@code id} ({@code epoch}, {@code seq}) is the producer append that closed the log (its retry). */
    public boolean isClosingAppend(String id, long epoch, long seq) {
        return id.equals(closedById) && epoch == closedByEpoch && seq == closedBySeq;
    }

    /** Whether a new producer may be remembered at {@code nowMs}: room left, or the least recent one silent long enough. */
    private boolean roomForNew(long nowMs) {
        if (producers == null || producers.size() < MAX_PRODUCERS) {
            return true;
        }
        return nowMs - producers.firstEntry().getValue().lastAcceptedMs >= FORGET_AFTER_MS;
    }

    private Producer find(String id) {
        return producers == null ? null : producers.get(id);
    }
}
