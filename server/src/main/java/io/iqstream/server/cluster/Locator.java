package io.iqstream.server.cluster;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Finds the node that holds a run, or a durable stream, that this node does not hold. Both are found by a key —
 * a run's id, a stream's path ({@code /v1/stream/...}; the two never collide: a run id has no {@code /}) — whose
 * rendezvous owner is where a new one is created, and both stay on the node that created them when the membership
 * changes, so an existing one is looked for, not computed:
 * <ol>
 * <li>a key looked up before: the node remembered for it (a small per-loop cache), if still alive;</li>
 * <li>this node alone in its view: here;</li>
 * <li>otherwise every other live member is asked at once (a {@code GET} of the caller's locate target — the run's
 *     status path, the stream's own path — with the peer and {@link #LOCATE} headers, answered 200 or 404 by the
 *     peer from what it holds): the first that holds it wins. None does and all answered: the key's rendezvous
 *     owner among the nodes that take new runs (a new one). One gave no answer (timeout, error, a suspected node)
 *     and none said yes: {@link #UNKNOWN}, answered 503 so the client retries — never a guess, so a run or a
 *     stream is never created a second time beside a node that holds it and is slow to answer.</li>
 * </ol>
 * <p><b>A node that is down is not a node that is gone</b> when durable streams are on disk
 * ({@code --durability disk}): a member of {@code --peers} that does not answer (its process stopped or died) will
 * come back with its streams. So while any member is down, a stream that no live member holds is
 * {@link #UNKNOWN} (503, retry) — a read, an append, and a creation too: the node that is down may hold that path,
 * and creating it elsewhere would leave two copies when it comes back. A node retired for good is taken out of
 * {@code --peers}. Runs, kept in memory, are looked up as before.
 *
 * <p>Asking every member, not only the owner under this node's view, is what keeps runs and streams whole when views
 * disagree or change (a node that joined, dropped, or came back): whichever node one was created on, every node
 * finds it there, for as long as that node answers. A lookup costs one small request per other member, once per
 * key per loop (then cached), never per event.
 *
 * <p>Confined to worker loops: the cache is per loop thread; lookups run on the JDK HTTP client's threads and
 * report back through {@link Executor} (the asking loop).
 */
final class Locator {
    /** Header of a lookup: "do you hold this run (or stream)?", answered without serving it. */
    static final String LOCATE = "X-IQStream-Locate";
    static final int CACHE_ENTRIES = 65_536;
    static final long LOOKUP_TIMEOUT_MS = 3000;
    /** {@link #lookup} result when a candidate gave no answer and none said yes: where the key is held is unknown. */
    static final Member UNKNOWN = new Member("unknown", 0);

    private final Membership membership;
    private final PeerRequests requests;
    /** Durable streams are on disk: a member that is down may hold any of them. */
    private final boolean streamsOnDisk;
    private final ThreadLocal<LinkedHashMap<String, Member>> cache = ThreadLocal.withInitial(
            () -> new LinkedHashMap<>(256, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Member> eldest) {
                    return size() > CACHE_ENTRIES;
                }
            });

    Locator(Membership membership, PeerRequests requests, boolean streamsOnDisk) {
        this.membership = membership;
        this.requests = requests;
        this.streamsOnDisk = streamsOnDisk;
    }

    /** Whether a member that is down may hold {@code key}: a stream's path, on disk, while one is down. */
    private boolean downMayHold(String key, Membership.View v) {
        return streamsOnDisk && !v.down().isEmpty() && key.startsWith(STREAM_PREFIX);
    }

    private static final String STREAM_PREFIX = "/v1/stream/";

    /** The decision for a key not held here: a member, {@code self} (serve here), or null (ask {@link #lookup}). */
    Member quick(String key) {
        Membership.View v = membership.view();
        Member cached = cache.get().get(key);
        if (cached != null && v.alive().contains(cached)) {
            return cached;
        }
        return v.alive().size() <= 1 && v.forNewRuns().size() <= 1 && !downMayHold(key, v) ? v.self() : null;
    }

    /** Forgets where {@code key} was found (its node no longer holds it). On the loop that looked it up. */
    void forget(String key) {
        cache.get().remove(key);
    }

    /**
     * Asks every other live member whether it holds {@code key}, with {@code GET locateTarget} (a target as the
     * request parser accepts it: the run's status path and query, a stream's raw path); calls {@code found} on
     * {@code loop} with the first that does (and true), else — every one said no — the key's owner among the
     * members that take new runs, or self (and false: no node holds it yet), or {@link #UNKNOWN}. {@code
     * authHeaders} are the client's credentials (name, value pairs), so the peer checks them as for the request
     * itself (none where the peer answers a verified peer's lookup without them).
     */
    void lookup(String key, String locateTarget, List<String> authHeaders, Executor loop,
            BiConsumer<Member, Boolean> found) {
        Membership.View v = membership.view();
        Member owner = Rendezvous.owner(key, v.forNewRuns());
        Member fallback = owner == null ? v.self() : owner;
        List<Member> ask = new ArrayList<>(v.alive().size());
        for (Member m : v.alive()) {
            if (!m.equals(v.self())) {
                ask.add(m);
            }
        }
        boolean downMayHold = downMayHold(key, v);
        if (ask.isEmpty()) {
            loop.execute(() -> found.accept(downMayHold ? UNKNOWN : fallback, false));
            return;
        }
        List<String> headers = new ArrayList<>(authHeaders);
        headers.add(LOCATE);
        headers.add("1");
        AtomicInteger remaining = new AtomicInteger(ask.size());
        AtomicBoolean decided = new AtomicBoolean();
        AtomicBoolean uncertain = new AtomicBoolean();
        for (Member m : ask) {
            requests.get(m, locateTarget, LOOKUP_TIMEOUT_MS, headers,
                    HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
                if (r != null && r.statusCode() == 200) {
                    if (decided.compareAndSet(false, true)) {
                        loop.execute(() -> {
                            cache.get().put(key, m);
                            found.accept(m, true);
                        });
                    }
                    return;
                }
                if (r == null || r.statusCode() != 404) {
                    // a member that did not answer may hold it: never start it elsewhere on a guess
                    uncertain.set(true);
                    if (e != null) {
                        membership.suspect(m);
                    }
                }
                if (remaining.decrementAndGet() == 0 && decided.compareAndSet(false, true)) {
                    Member outcome = uncertain.get() || downMayHold ? UNKNOWN : fallback;
                    loop.execute(() -> found.accept(outcome, false));
                }
            });
        }
    }
}
