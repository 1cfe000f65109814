package io.iqstream.server.cluster;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

/**
 * Finds the node that holds a run this node does not hold, without a broadcast on the hot path:
 * <ol>
 * <li>a run looked up before: the node remembered for it (a small per-loop cache), if still alive;</li>
 * <li>no membership change remembered: the run's rendezvous owner among the nodes that take new runs — where it
 *     was created — with no lookup at all;</li>
 * <li>after a change: the owner under the current set and under each remembered earlier set (alive ones only) are
 *     asked in turn ({@code GET /v1/runs/{id}} with the peer and {@link #LOCATE} headers, answered 200 or 404 by
 *     the peer from its own registry) until one holds it; none does: the current owner (a new run); one gave no
 *     answer (timeout, error) and none said yes: {@link #UNKNOWN}, answered 503 so the client retries.</li>
 * </ol>
 * A lookup costs one small request per candidate, only for a run that is neither here nor where the current set
 * puts it, and once per run per loop (then cached).
 *
 * <p>Confined to worker loops: the cache is per loop thread; lookups run on the JDK HTTP client's threads and
 * report back through {@link Executor} (the run's loop).
 */
final class RunLocator {
    /** Header of a lookup: "do you hold this run?", answered without serving it. */
    static final String LOCATE = "X-IQStream-Locate";
    static final int CACHE_ENTRIES = 65_536;
    static final long LOOKUP_TIMEOUT_MS = 3000;
    /** {@link #lookup} result when a candidate gave no answer and none said yes: where the run is is unknown. */
    static final Member UNKNOWN = new Member("unknown", 0);

    private final Membership membership;
    private final PeerRequests requests;
    private final ThreadLocal<LinkedHashMap<String, Member>> cache = ThreadLocal.withInitial(
            () -> new LinkedHashMap<>(256, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Member> eldest) {
                    return size() > CACHE_ENTRIES;
                }
            });

    RunLocator(Membership membership, PeerRequests requests) {
        this.membership = membership;
        this.requests = requests;
    }

    /** The decision for a run not held here: a member, {@code self} (serve here), or null (ask {@link #lookup}). */
    Member quick(String runId) {
        Membership.View v = membership.view();
        Member self = v.self();
        Member cached = cache.get().get(runId);
        if (cached != null && v.alive().contains(cached)) {
            return cached;
        }
        Member owner = Rendezvous.owner(runId, v.forNewRuns());
        if (owner == null) {
            return self;
        }
        return candidates(runId, v, owner).isEmpty() ? owner : null;
    }

    /** Earlier owners worth asking: alive, not this node (it has no such run), not the current owner. */
    private static List<Member> candidates(String runId, Membership.View v, Member owner) {
        List<Member> out = new ArrayList<>(2);
        for (List<Member> set : v.previous()) {
            Member o = Rendezvous.owner(runId, set);
            if (o != null && !o.equals(v.self()) && !o.equals(owner) && v.alive().contains(o) && !out.contains(o)) {
                out.add(o);
            }
        }
        return out;
    }

    /**
     * Asks the current owner, then the earlier owners, whether they hold {@code runId}; calls {@code found} on
     * {@code loop} with the first that does (and true), else the current owner or self (and false: no node holds
     * the run yet), or {@link #UNKNOWN}. {@code authHeaders} are the
     * client's credentials (name, value pairs), so the peer checks them as for the request itself.
     */
    void lookup(String runId, String query, List<String> authHeaders, Executor loop,
            BiConsumer<Member, Boolean> found) {
        Membership.View v = membership.view();
        Member owner = Rendezvous.owner(runId, v.forNewRuns());
        List<Member> ask = new ArrayList<>(3);
        if (owner != null && !owner.equals(v.self())) {
            ask.add(owner);
        }
        ask.addAll(candidates(runId, v, owner));
        Member fallback = owner == null ? v.self() : owner;
        askNext(runId, query, authHeaders, ask, 0, fallback, false, loop, found);
    }

    private void askNext(String runId, String query, List<String> authHeaders, List<Member> ask, int i,
            Member fallback, boolean uncertain, Executor loop, BiConsumer<Member, Boolean> found) {
        if (i == ask.size()) {
            // a candidate that did not answer may hold the run: never start it elsewhere on a guess
            Member outcome = uncertain ? UNKNOWN : fallback;
            loop.execute(() -> found.accept(outcome, false));
            return;
        }
        Member m = ask.get(i);
        List<String> headers = new ArrayList<>(authHeaders);
        headers.add(LOCATE);
        headers.add("1");
        requests.get(m, "/v1/runs/" + runId + (query == null ? "" : "?" + query), LOOKUP_TIMEOUT_MS, headers,
                HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
            if (r != null && r.statusCode() == 200) {
                loop.execute(() -> {
                    if (!m.equals(membership.self())) {
                        cache.get().put(runId, m);
                    }
                    found.accept(m, true);
                });
            } else {
                boolean noAnswer = r == null || r.statusCode() != 404;
                askNext(runId, query, authHeaders, ask, i + 1, fallback, uncertain || noAnswer, loop, found);
            }
        });
    }
}
