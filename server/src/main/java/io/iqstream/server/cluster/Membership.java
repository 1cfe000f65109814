package io.iqstream.server.cluster;

import io.iqstream.server.metrics.ClusterMetrics;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who is in the cluster, and who takes new runs. Every {@link #PROBE_INTERVAL_MS} it re-resolves each
 * {@code --peers} host (a DNS name may list many addresses: a Kubernetes headless Service), adds this node's own
 * {@code --advertise}, and asks every member {@code GET /readyz}, signed ({@link PeerAuth}): an answer without proof
 * of the cluster secret is no member at all (never ready, never alive: nothing is sent to it); 200 is
 * <em>ready</em> (takes new runs), any other proven answer is <em>alive</em> (holds runs, takes none: draining or at its memory budget); a refused connection
 * is dead at once, no answer {@link #FAILS_TO_DEAD} times in a row (a stalled node) is dead; a member that misses
 * fewer probes keeps its state, and this node never counts itself dead. The result is an immutable {@link View}, published through a
 * volatile field.
 *
 * <p>The view also remembers the last {@link #HISTORY} distinct ready sets: a run created under an older set is
 * looked for at its owner under that set (see {@link RunLocator}) for {@link #HISTORY_NANOS}, so a membership
 * change costs a lookup only
 * for runs that are not where the current set puts them, never a broadcast on the hot path.
 *
 * <p>Threads: one daemon scheduler thread probes (with the JDK's HTTP client); {@link #view()} and
 * {@link #suspect} are for any thread.
 */
public final class Membership implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);
    static final long PROBE_INTERVAL_MS = 500;
    /** Probes without an answer (timeouts: a busy node) before a member counts as dead. */
    static final int FAILS_TO_DEAD = 6;
    static final long PROBE_TIMEOUT_MS = 1500;
    /** {@link #probe} result for a refused connection: nothing listens there, dead at once. */
    private static final int REFUSED = -2;
    /** {@link #probe} result for an answer without proof of the secret: not a member, at once. */
    private static final int UNPROVEN = -3;
    static final int HISTORY = 8;
    /** How long an earlier ready set is remembered: runs created under it are looked for at its owners. */
    static final long HISTORY_NANOS = TimeUnit.HOURS.toNanos(1);

    /** One published state of the cluster. */
    public record View(Member self, List<Member> ready, Set<Member> alive, List<List<Member>> previous) {
        /** The members that may take a new run: the ready ones, or the alive ones if none is ready. */
        public List<Member> forNewRuns() {
            return ready.isEmpty() ? new ArrayList<>(alive) : ready;
        }
    }

    private final Member self;
    private final PeerAuth auth;
    /** Members whose last answer did not prove the secret (logged once as they turn so). Scheduler thread only. */
    private final Set<Member> unproven = new TreeSet<>();
    private final List<String> peers;
    private final HttpClient http;
    private final ClusterMetrics metrics;
    private final ScheduledExecutorService scheduler;
    private final Map<Member, Integer> failures = new HashMap<>();
    private volatile View view;
    private boolean probed;
    /** {@link #probed}, for any thread: false until every member answered once or is surely dead. */
    private volatile boolean settled;
    /** When each entry of the view's history was replaced, newest first. Scheduler thread only. */
    private final List<Long> replacedAtNanos = new ArrayList<>();

    public Membership(Member self, List<String> peers, PeerAuth auth, ClusterMetrics metrics) {
        this.self = self;
        this.auth = auth;
        this.peers = List.copyOf(peers);
        this.metrics = metrics;
        this.view = new View(self, List.of(self), Set.of(self), List.of());
        metrics.members(1, 1);
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(1000)).build();
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "iqstream-membership");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts probing (once this node listens: it probes itself too); the first round runs at once. */
    public void start() {
        scheduler.scheduleWithFixedDelay(this::probeSafely, 0, PROBE_INTERVAL_MS, TimeUnit.MILLISECONDS);
    }

    public Member self() {
        return self;
    }

    public View view() {
        return view;
    }

    /**
     * True once a probe round heard from every member (or found it surely dead): before that, this node's view may
     * lack members that hold runs or own new ones, so it must not place or look up a run on its own. Any thread.
     */
    public boolean settled() {
        return settled;
    }

    /** A peer could not be reached by a forward: treat it as dead until a probe finds it again. Any thread. */
    public void suspect(Member member) {
        if (member.equals(self)) {
            return;
        }
        scheduler.execute(() -> {
            View v = view;
            if (v.alive().contains(member)) {
                failures.put(member, FAILS_TO_DEAD);
                Set<Member> alive = new TreeSet<>(v.alive());
                alive.remove(member);
                List<Member> ready = new ArrayList<>(v.ready());
                ready.remove(member);
                publish(ready, alive, probed);
            }
        });
    }

    private void probeSafely() {
        try {
            probe();
        } catch (RuntimeException e) {
            LOG.warn("cluster membership probe failed", e);
        }
    }

    private void probe() {
        Set<Member> members = new TreeSet<>();
        members.add(self);
        for (String peer : peers) {
            Member named = Member.parse(peer);
            try {
                for (InetAddress a : InetAddress.getAllByName(named.host())) {
                    members.add(new Member(a.getHostAddress(), named.port()));
                }
            } catch (UnknownHostException e) {
                LOG.debug("peer {} does not resolve: {}", peer, e.getMessage());
            }
        }
        Map<Member, CompletableFuture<Integer>> answers = new HashMap<>();
        for (Member m : members) {
            PeerAuth.Signed signed = auth.sign(m, "GET", "/readyz", System.currentTimeMillis());
            HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + m.key() + "/readyz"))
                    .timeout(Duration.ofMillis(PROBE_TIMEOUT_MS)).header(PeerAuth.HEADER, signed.header()).GET()
                    .build();
            answers.put(m, http.sendAsync(r, HttpResponse.BodyHandlers.discarding())
                    .thenApply(a -> auth.proves(signed, a.statusCode(), a.headers().firstValue(PeerAuth.PROOF)
                            .orElse(null)) ? a.statusCode() : UNPROVEN)
                    .exceptionally(Membership::failure));
        }
        List<Member> ready = new ArrayList<>();
        Set<Member> alive = new TreeSet<>();
        View old = view;
        boolean definitive = true;
        for (Map.Entry<Member, CompletableFuture<Integer>> e : answers.entrySet()) {
            Member m = e.getKey();
            int code = e.getValue().join();
            definitive &= code > 0 || code == REFUSED || code == UNPROVEN || m.equals(self)
                    || failures.getOrDefault(m, 0) + 1 >= FAILS_TO_DEAD;
            if (code == UNPROVEN && !m.equals(self)) {
                // answered, but not by a holder of the secret: never a member, and nothing is sent to it
                failures.remove(m);
                if (unproven.add(m)) {
                    metrics.failed(ClusterMetrics.Failure.UNPROVEN);
                    LOG.warn("cluster: {} answers /readyz without proof of --cluster-secret: not a member", m);
                }
                continue;
            }
            if (code > 0 && unproven.remove(m)) {
                LOG.info("cluster: {} proves the cluster secret again", m);
            }
            if (code > 0) {
                failures.remove(m);
                alive.add(m);
                if (code == 200) {
                    ready.add(m);
                }
            } else if (m.equals(self)) {
                // this node is alive by definition; a probe of itself that times out changes nothing
                alive.add(m);
                if (old.ready().contains(m)) {
                    ready.add(m);
                }
            } else {
                int n = code == REFUSED ? FAILS_TO_DEAD : failures.merge(m, 1, Integer::sum);
                if (n < FAILS_TO_DEAD && old.alive().contains(m)) {
                    alive.add(m); // one missed probe (a busy node) changes nothing
                    if (old.ready().contains(m)) {
                        ready.add(m);
                    }
                }
            }
        }
        failures.keySet().retainAll(members);
        publish(ready, alive, definitive);
    }

    private static int failure(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && !(t instanceof java.net.ConnectException)) {
            t = t.getCause();
        }
        return t instanceof java.net.ConnectException ? REFUSED : -1;
    }

    /** Publishes a new view if it differs; a changed ready set goes into the history. Scheduler thread only. */
    private void publish(List<Member> readyIn, Set<Member> aliveIn, boolean definitive) {
        List<Member> ready = new ArrayList<>(readyIn);
        ready.sort(null);
        View old = view;
        long now = System.nanoTime();
        boolean expired = !replacedAtNanos.isEmpty()
                && now - replacedAtNanos.get(replacedAtNanos.size() - 1) > HISTORY_NANOS;
        if (old.ready().equals(ready) && old.alive().equals(aliveIn) && !expired) {
            settled |= definitive; // a node alone, its peers refused: settled, with nothing to remember
            return;
        }
        List<List<Member>> previous = new ArrayList<>(old.previous());
        if (!probed && definitive && ready.contains(self) && ready.size() > 1) {
            // joining (the first view where every member answered or is surely dead): the runs already in the
            // cluster were placed without this node
            List<Member> without = new ArrayList<>(ready);
            without.remove(self);
            previous.add(List.copyOf(without));
            replacedAtNanos.add(now);
        } else if (probed && !old.ready().equals(ready) && !old.ready().isEmpty()) {
            int at = previous.indexOf(old.ready());
            if (at >= 0) {
                previous.remove(at);
                replacedAtNanos.remove(at);
            }
            previous.add(0, old.ready());
            replacedAtNanos.add(0, now);
        }
        while (!previous.isEmpty() && (previous.size() > HISTORY
                || now - replacedAtNanos.get(previous.size() - 1) > HISTORY_NANOS)) {
            previous.remove(previous.size() - 1);
            replacedAtNanos.remove(replacedAtNanos.size() - 1);
        }
        // views before every member answered once (this node alone, a partial set) are no membership to remember
        probed |= definitive;
        settled |= probed;
        view = new View(self, List.copyOf(ready), Set.copyOf(aliveIn), List.copyOf(previous));
        metrics.members(aliveIn.size(), ready.size());
        LOG.info("cluster view: ready {}, alive {}", ready, new TreeSet<>(aliveIn));
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        http.close();
    }
}
