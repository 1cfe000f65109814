package io.iqstream.server.admission;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's thread listings in flight ({@code GET /v1/threads/{id}/runs}), shared fairly: at most
 * {@link #maxInFlight} at once (the bound on the heap a burst of listings can take: that many pages), and at most
 * {@link #maxPerCaller} of them for one caller (one token subject; a token without {@code sub} is its own caller),
 * so one caller listing in a loop on many connections holds its share and no more, and every other caller still
 * finds a slot. A connection has one listing in flight at most: a listing pipelined behind another waits for its
 * answer ({@code http/HttpRequestHandler}). Both refusals are expected outcomes, returned.
 *
 * <p>Any thread (a listing is taken on its connection's loop and given back on it, loops differ). The map holds one
 * entry per caller with a listing in flight, so at most {@link #maxInFlight} entries.
 */
public final class ListingSlots {
    /** What {@link #take} decided. */
    public enum Outcome {
        /** A slot is the caller's until {@link #give}. */
        TAKEN,
        /** This caller holds its share already. */
        CALLER_BUSY,
        /** Every slot of the node is taken. */
        NODE_BUSY
    }

    /** Thread listings gathered at once on a node. */
    public static final int THREAD_LISTINGS = 4;
    /** Thread listings gathered at once on a node for one caller (a token subject): its share. */
    public static final int THREAD_LISTINGS_PER_CALLER = 2;

    private final int maxInFlight;
    private final int maxPerCaller;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ConcurrentHashMap<String, Integer> callers = new ConcurrentHashMap<>();

    /** The node's thread listings: {@value #THREAD_LISTINGS} at once, {@value #THREAD_LISTINGS_PER_CALLER} a caller. */
    public static ListingSlots forThreadListings() {
        return new ListingSlots(THREAD_LISTINGS, THREAD_LISTINGS_PER_CALLER);
    }

    public ListingSlots(int maxInFlight, int maxPerCaller) {
        if (maxInFlight < 1 || maxPerCaller < 1 || maxPerCaller > maxInFlight) {
            throw new IllegalArgumentException("need 1 <= maxPerCaller <= maxInFlight");
        }
        this.maxInFlight = maxInFlight;
        this.maxPerCaller = maxPerCaller;
    }

    public int maxInFlight() {
        return maxInFlight;
    }

    public int maxPerCaller() {
        return maxPerCaller;
    }

    /** Takes a slot for {@code caller}; on {@link Outcome#TAKEN} the caller must {@link #give} it back once. */
    public Outcome take(String caller) {
        Integer before = callers.get(caller);
        if (before != null && before >= maxPerCaller) {
            return Outcome.CALLER_BUSY;
        }
        Integer now = callers.merge(caller, 1, Integer::sum);
        if (now > maxPerCaller) {
            callerDone(caller);
            return Outcome.CALLER_BUSY;
        }
        if (inFlight.incrementAndGet() > maxInFlight) {
            inFlight.decrementAndGet();
            callerDone(caller);
            return Outcome.NODE_BUSY;
        }
        return Outcome.TAKEN;
    }

    /** Gives back a slot {@link #take} returned. */
    public void give(String caller) {
        inFlight.decrementAndGet();
        callerDone(caller);
    }

    /** Listings in flight now, for tests and metrics. */
    public int inFlight() {
        return inFlight.get();
    }

    private void callerDone(String caller) {
        callers.computeIfPresent(caller, (k, n) -> n <= 1 ? null : n - 1);
    }
}
