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
 * {@code --peers} host (a DNS name may list many addresses: a Kubernetes headless Service) — or, when {@code
 * --advertise} is a host name, takes each entry as one member by its name ({@link #byName}) — adds this node's own
 * {@code --advertise}, and asks every member {@code GET /readyz}, signed ({@link PeerAuth}): an answer without proof
 * of the cluster secret is no member at all (never ready, never alive: nothing is sent to it); 200 is
 * <em>ready</em> (takes new runs), any other proven answer is <em>alive</em> (holds runs, takes none: draining or at
 * its memory budget). A connection refused twice in a row, a probe interval apart (nothing listens: the process
 * is gone), is dead.
 *
 * <p><b>Suspicion before a drop.</b> A probe that gets no answer in time — a JVM pause, a starved CPU on either
 * side, a slow network — is a miss, never a refusal (the JDK client reports a timeout before the connection is
 * made as a {@code ConnectException} cause: that is still a timeout here). A member that misses probes is
 * <em>suspected</em> and keeps its state (ready stays ready: runs are still placed on it, lookups still ask it);
 * it is dropped only when it has not answered for {@link #DEAD_AFTER_MS} and missed at least {@link #MIN_MISSES}
 * probes in a row. A failed forward ({@link #suspect}) only asks for an early probe. This node never counts itself
 * dead.
 *
 * <p><b>Views that disagree.</b> Each node's {@code /readyz} answer to a peer carries its ready set
 * ({@link #VIEW_HEADER}); {@link #disagreeing()} counts the peers whose last set differs from this node's. Views
 * may disagree for a while (a probe seen by one node and not another); a run (or stream) is still found wherever
 * it is held, because {@link Locator} asks every live member about one that is not here — the owner of a new one is
 * the only thing the ready set decides.
 *
 * <p>Threads: one daemon scheduler thread probes (with the JDK's HTTP client); {@link #view()},
 * {@link #disagreeing()} and {@link #suspect} are for any thread.
 */
public final class Membership implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);
    static final long PROBE_INTERVAL_MS = 500;
    static final long PROBE_TIMEOUT_MS = 1500;
    /**
     * How long a member may go without answering before it counts as dead. Measured (docs/DEPLOY.md, "Pause,
     * starvation, death"): on a 2-CPU machine with two busy loops a probe answer took up to ~2 s, a SIGSTOP of 3 s
     * plus a GC pause must pass; 10 s leaves room for both and still lets a stalled node's runs move within seconds.
     */
    static final long DEAD_AFTER_MS = 10_000;
    /** Refused connections in a row (one probe interval apart) that make a member dead: nothing listens there. */
    static final int REFUSALS_TO_DEAD = 2;
    /** Misses in a row needed as well as {@link #DEAD_AFTER_MS} (a prober that itself stalled misses one round). */
    static final int MIN_MISSES = 3;
    /** The header of a {@code /readyz} answer to a peer: the answering node's ready set, comma-separated. */
    public static final String VIEW_HEADER = "X-IQStream-View";
    /** {@link #probe} result for a refused connection: nothing listens there, dead at once. */
    private static final int REFUSED = -2;
    /** {@link #probe} result for an answer without proof of the secret: not a member, at once. */
    private static final int UNPROVEN = -3;
    /** {@link #probe} result for no answer in time (or any other failure): a miss. */
    private static final int MISSED = -1;

    /** One published state of the cluster: {@code suspected} are alive members that missed their latest probes. */
    /**
     * One probe round's view. {@code down}: members of {@code --peers} (as resolved now) that proved nothing and
     * answered nothing — stopped or dead, and perhaps coming back ({@link Locator}: with streams on disk, what no
     * live member holds may be theirs).
     */
    public record View(Member self, List<Member> ready, Set<Member> alive, Set<Member> suspected, Set<Member> down) {
        /** The members that may take a new run: the ready ones, or the alive ones if none is ready. */
        public List<Member> forNewRuns() {
            return ready.isEmpty() ? new ArrayList<>(alive) : ready;
        }

        /** The ready set as {@link #VIEW_HEADER} carries it. */
        public String readyKeys() {
            StringBuilder sb = new StringBuilder();
            for (Member m : ready) {
                sb.append(sb.isEmpty() ? "" : ",").append(m.key());
            }
            return sb.toString();
        }
    }

    /** A probe's outcome: the status (or a negative {@code REFUSED}, {@code UNPROVEN}, {@code MISSED}), the view. */
    private record Answer(int code, String view) {}

    private final Member self;
    private final PeerAuth auth;
    /** Members whose last answer did not prove the secret (logged once as they turn so). Scheduler thread only. */
    private final Set<Member> unproven = new TreeSet<>();
    private final List<String> peers;
    /**
     * Members are named as {@code --advertise} names this node: by IP (each {@code --peers} host resolved; one DNS
     * name may list many pods) or, when it is a host name, by name (each {@code --peers} entry is one member, never
     * resolved: a StatefulSet's pod names). A member named so stays one while it is down, even while its name has
     * no DNS record, so what it may hold on disk is never taken for gone ({@link Locator}).
     */
    private final boolean byName;
    private final HttpClient http;
    private final ClusterMetrics metrics;
    private final ScheduledExecutorService scheduler;
    /**
     * Members dropped from the alive set, by the rule that dropped them: refused connections in a row, or silence
     * past {@link #DEAD_AFTER_MS}. Written by the scheduler thread only; read by tests, which check a drop's cause
     * instead of how long it took.
     */
    private volatile int droppedOnRefusals;
    private volatile int droppedOnSilence;
    /** Probes missed in a row, per member. Scheduler thread only. */
    private final Map<Member, Integer> misses = new HashMap<>();
    /** Refused connections in a row, per member. Scheduler thread only. */
    private final Map<Member, Integer> refusals = new HashMap<>();
    /** When each member last answered (or, never answered, when it was first probed). Scheduler thread only. */
    private final Map<Member, Long> answeredAtNanos = new HashMap<>();
    /** Each peer's last reported ready set. Scheduler thread only. */
    private final Map<Member, String> peerViews = new HashMap<>();
    private volatile View view;
    private volatile int disagreeing;
    /** False until every member answered once or is surely dead. */
    private volatile boolean settled;
    private volatile boolean earlyProbeQueued;

    public Membership(Member self, List<String> peers, PeerAuth auth, ClusterMetrics metrics) {
        this.self = self;
        this.auth = auth;
        this.peers = List.copyOf(peers);
        this.byName = !isIpLiteral(self.host());
        this.metrics = metrics;
        this.view = new View(self, List.of(self), Set.of(self), Set.of(), Set.of());
        metrics.members(1, 1, 0);
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

    /** How many peers' last reported ready set differs from this node's. Any thread. */
    public int disagreeing() {
        return disagreeing;
    }

    /**
     * True once a probe round heard from every member (or found it surely dead): before that, this node's view may
     * lack members that hold runs or own new ones, so it must not place or look up a run on its own. Any thread.
     */
    public boolean settled() {
        return settled;
    }

    /**
     * A forward to {@code member} failed: probe now rather than at the next interval. A refusal drops it at once;
     * a timeout is one more miss (a starved peer is not dropped on one failed connection). Any thread.
     */
    public void suspect(Member member) {
        if (member.equals(self) || earlyProbeQueued) {
            return;
        }
        earlyProbeQueued = true;
        scheduler.execute(() -> {
            earlyProbeQueued = false;
            probeSafely();
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
            if (byName) {
                members.add(named);
                continue;
            }
            try {
                for (InetAddress a : InetAddress.getAllByName(named.host())) {
                    members.add(new Member(a.getHostAddress(), named.port()));
                }
            } catch (UnknownHostException e) {
                LOG.debug("peer {} does not resolve: {}", peer, e.getMessage());
            }
        }
        Map<Member, CompletableFuture<Answer>> answers = new HashMap<>();
        for (Member m : members) {
            PeerAuth.Signed signed = auth.sign(m, "GET", "/readyz", System.currentTimeMillis());
            HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + m.key() + "/readyz"))
                    .timeout(Duration.ofMillis(PROBE_TIMEOUT_MS)).header(PeerAuth.HEADER, signed.header()).GET()
                    .build();
            answers.put(m, http.sendAsync(r, HttpResponse.BodyHandlers.discarding())
                    .thenApply(a -> auth.proves(signed, a.statusCode(), a.headers().firstValue(PeerAuth.PROOF)
                            .orElse(null)) ? new Answer(a.statusCode(), a.headers().firstValue(VIEW_HEADER)
                                    .orElse(null)) : new Answer(UNPROVEN, null))
                    .exceptionally(e -> new Answer(failure(e), null)));
        }
        List<Member> ready = new ArrayList<>();
        Set<Member> alive = new TreeSet<>();
        Set<Member> suspected = new TreeSet<>();
        View old = view;
        long now = System.nanoTime();
        boolean definitive = true;
        for (Map.Entry<Member, CompletableFuture<Answer>> e : answers.entrySet()) {
            Member m = e.getKey();
            Answer answer = e.getValue().join();
            int code = answer.code();
            answeredAtNanos.putIfAbsent(m, now);
            if (code == UNPROVEN && !m.equals(self)) {
                // answered, but not by a holder of the secret: never a member, and nothing is sent to it
                misses.remove(m);
                peerViews.remove(m);
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
                misses.remove(m);
                refusals.remove(m);
                answeredAtNanos.put(m, now);
                alive.add(m);
                if (code == 200) {
                    ready.add(m);
                }
                if (!m.equals(self)) {
                    peerViews.put(m, answer.view() == null ? "" : answer.view());
                }
            } else if (m.equals(self)) {
                // this node is alive by definition; a probe of itself that times out changes nothing
                alive.add(m);
                if (old.ready().contains(m)) {
                    ready.add(m);
                }
            } else {
                int n = misses.merge(m, 1, Integer::sum);
                int refusedInRow = code == REFUSED ? refusals.merge(m, 1, Integer::sum) : 0;
                if (code != REFUSED) {
                    refusals.remove(m);
                }
                boolean silentLong = now - answeredAtNanos.get(m) >= TimeUnit.MILLISECONDS.toNanos(DEAD_AFTER_MS);
                boolean dead = refusedInRow >= REFUSALS_TO_DEAD || n >= MIN_MISSES && silentLong;
                if (dead) {
                    peerViews.remove(m);
                    if (old.alive().contains(m)) {
                        if (refusedInRow >= REFUSALS_TO_DEAD) {
                            droppedOnRefusals++;
                        } else {
                            droppedOnSilence++;
                        }
                    }
                } else {
                    // never answered yet and not surely dead: this view may lack a member
                    definitive &= old.alive().contains(m) || settled;
                    if (old.alive().contains(m)) {
                        alive.add(m); // a suspect: missed probes change nothing until it is surely dead
                        suspected.add(m);
                        if (old.ready().contains(m)) {
                            ready.add(m);
                        }
                    }
                }
            }
        }
        misses.keySet().retainAll(members);
        refusals.keySet().retainAll(members);
        answeredAtNanos.keySet().retainAll(members);
        peerViews.keySet().retainAll(alive);
        Set<Member> down = new TreeSet<>(members);
        down.removeAll(alive);
        down.removeAll(unproven);
        down.remove(self);
        publish(ready, alive, suspected, down, definitive);
    }
    /** Members dropped because their connections were refused twice in a row. Any thread. */
    int droppedOnRefusals() {
        return droppedOnRefusals;
    }

    /** Members dropped because they were silent past {@link #DEAD_AFTER_MS}. Any thread. */
    int droppedOnSilence() {
        return droppedOnSilence;
    }

    /** Whether {@code host} is an IPv4 or IPv6 address rather than a name. */
    static boolean isIpLiteral(String host) {
        return host.matches("[0-9.]+") || host.indexOf(':') >= 0 || host.startsWith("[");
    }

    /** A refusal only when the connection was refused; a timeout (connecting or answering) is a miss. */
    private static int failure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.http.HttpTimeoutException) {
                return MISSED; // HttpConnectTimeoutException too: its cause is a ConnectException, yet no refusal
            }
            if (t instanceof java.net.ConnectException) {
                return REFUSED;
            }
        }
        return MISSED;
    }

    /** Publishes a new view if it differs and counts the peers that disagree. Scheduler thread only. */
    private void publish(List<Member> readyIn, Set<Member> aliveIn, Set<Member> suspected, Set<Member> down,
            boolean definitive) {
        List<Member> ready = new ArrayList<>(readyIn);
        ready.sort(null);
        View old = view;
        View next = new View(self, List.copyOf(ready), Set.copyOf(aliveIn), Set.copyOf(suspected), Set.copyOf(down));
        int differ = 0;
        for (String v : peerViews.values()) {
            if (!v.equals(next.readyKeys())) {
                differ++;
            }
        }
        disagreeing = differ;
        metrics.members(aliveIn.size(), ready.size(), suspected.size());
        metrics.viewsDisagreeing(differ);
        if (!old.suspected().equals(next.suspected())) {
            LOG.info("cluster: suspected (missed probes, kept) {}", new TreeSet<>(suspected));
        }
        if (old.ready().equals(next.ready()) && old.alive().equals(next.alive())) {
            if (!old.suspected().equals(next.suspected()) || !old.down().equals(next.down())) {
                view = next;
            }
        } else {
            view = next;
            metrics.viewChanged();
            LOG.info("cluster view: ready {}, alive {}", ready, new TreeSet<>(aliveIn));
        }
        // after the view it settles on: a request that finds this node settled must find that view, never the
        // view of a node alone it starts with (under which every path not held here would be served here: a 404)
        settled |= definitive;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        http.close();
    }
}
