package io.iqstream.server.cluster;

import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.run.RunWaiter;
import io.iqstream.server.run.ThreadRun;
import io.iqstream.server.wire.HttpReplies;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster part of a node ({@code --peers}): membership, run location and forwarding. The one entry point is
 * {@link #route}, called where a run request is about to be served (on the run's worker loop, after the token
 * was checked): it says whether to serve the request here or relays it to the node that holds the run.
 *
 * <p>Rules: a request that carries a peer header verified by {@link #verifyPeer} was forwarded by a peer and is
 * served here, never forwarded again (one that does not verify is refused before it gets here); a run held here (or remembered as expired here) is served here; anything else goes
 * where {@link RunLocator} finds the run — the owner of a new run being the rendezvous choice among the members
 * that take new runs. Any thread may hold it; {@link #route} runs on the run's loop.
 */
public final class Cluster implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);

    private final Membership membership;
    private final PeerAuth auth;
    private final PeerChannels peers;
    private final PeerRequests requests;
    private final RunLocator locator;
    private final ThreadListingPeers listings;
    private final HttpReplies replies;
    private final ClusterMetrics metrics;
    private final long awaitRunMs;
    private final long awaitRunNanos;

    /**
     * Header of a relayed request whose sender's lookup found no node holding the run: the receiver may create it
     * (a publish) or wait for it. Without it, a receiver that does not hold the run answers {@link #NOT_HELD}.
     */
    static final String PLACED = "X-IQStream-Placed";
    /** Header of a peer's 404 for a relayed request of a run it does not hold: the sender looks again. */
    static final String NOT_HELD = "X-IQStream-Not-Held";

    /** How often a read waiting for a run that no node holds yet asks the peers again. */
    static final long AWAIT_POLL_MS = 200;

    private Cluster(Membership membership, PeerAuth auth, PeerChannels peers, HttpReplies replies,
            ClusterMetrics metrics, long awaitRunMs) {
        this.awaitRunMs = awaitRunMs;
        this.awaitRunNanos = TimeUnit.MILLISECONDS.toNanos(awaitRunMs);
        this.membership = membership;
        this.auth = auth;
        this.peers = peers;
        this.replies = replies;
        this.metrics = metrics;
        this.requests = new PeerRequests(membership, auth);
        this.locator = new RunLocator(membership, requests);
        this.listings = new ThreadListingPeers(membership, requests);
    }

    /** Starts the cluster part when {@code --peers} is given; null otherwise (a single node, as before). */
    public static Cluster start(ServerConfig config, String transportName, HttpReplies replies, Metrics metrics) {
        if (!config.clustered()) {
            return null;
        }
        Member self = Member.parse(config.advertise());
        metrics.clustered();
        PeerAuth auth = new PeerAuth(config.clusterSecret(), self);
        Membership membership = new Membership(self, config.peers(), auth, metrics.cluster);
        LOG.info("cluster: this node is {}, peers {}", self, config.peers());
        return new Cluster(membership, auth,
                new PeerChannels(transportName, metrics.cluster), replies, metrics.cluster, config.awaitRunMs());
    }

    /** Starts watching the members; call once this node's listener is bound (it probes itself as well). */
    public void begin() {
        membership.start();
    }

    public Membership membership() {
        return membership;
    }

    /**
     * Checks a request that says it comes from a peer ({@link PeerAuth#HEADER}): the verified request, whose
     * answer {@code proofs} will sign, or null (the caller refuses it: such a request is never served as a
     * client's, nor forwarded, so no request loops between nodes whose secrets or clocks disagree). On the
     * connection's loop.
     */
    public PeerAuth.Incoming verifyPeer(HttpRequest request, PeerProofHandler proofs) {
        PeerAuth.Incoming in = auth.verify(request.headers().get(PeerAuth.HEADER), request.method().name(),
                request.uri(), System.currentTimeMillis());
        if (in == null) {
            metrics.failed(ClusterMetrics.Failure.UNPROVEN);
        } else {
            proofs.expect(in);
        }
        return in;
    }

    /** The handler that signs this node's answers to peers, one per connection. */
    public PeerProofHandler newProofHandler() {
        return new PeerProofHandler(auth);
    }

    /**
     * Decides where a run request is served. Returns null: serve it here; {@link Relay#ANSWERED}: it was a peer's
     * lookup and has been answered; {@link Relay#PENDING}: peers are being asked, {@code later} gets the
     * outcome (null or a relay) on this loop; any other relay: the request is being forwarded, body chunks go to
     * it. On the run's worker loop.
     */
    public Relay route(ChannelHandlerContext ctx, HttpRequest request, String runId, RunRegistry registry,
            boolean keepAlive, boolean fromPeer, Consumer<Relay> later) {
        if (fromPeer) {
            if (request.headers().contains(RunLocator.LOCATE)) {
                boolean held = registry.get(runId) != null || registry.isGone(runId);
                replies.json(ctx, request, held ? HttpResponseStatus.OK : HttpResponseStatus.NOT_FOUND,
                        "{\"held\":" + held + "}", keepAlive);
                return Relay.ANSWERED;
            }
            if (registry.get(runId) == null && !registry.isGone(runId) && !request.headers().contains(PLACED)) {
                // relayed here because the sender remembered the run here (its node may have restarted since):
                // never awaited or created on that memory; the sender looks again
                FullHttpResponse r = HttpReplies.response(HttpResponseStatus.NOT_FOUND, "application/json",
                        "{\"error\":\"not_held\",\"message\":\"this node does not hold run " + runId + "\"}");
                r.headers().set(NOT_HELD, "1");
                replies.send(ctx, request, r, keepAlive);
                return Relay.ANSWERED;
            }
            return null;
        }
        if (registry.get(runId) != null || registry.isGone(runId)) {
            return null;
        }
        if (!membership.settled()) {
            // just started: until every peer answered once, a run created here could be one that another node owns
            metrics.failed(ClusterMetrics.Failure.LOOKUP);
            replies.error(ctx, request, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "this node has not heard from all its peers yet; retry", false);
            return Relay.ANSWERED;
        }
        Member target = locator.quick(runId);
        if (target != null) {
            return target.equals(membership.self()) ? null
                    : forward(ctx, request, target, keepAlive, true, false, new Lookup(ctx, request, runId,
                            registry, keepAlive, later, awaitUntilNanos(request)));
        }
        new Lookup(ctx, request, runId, registry, keepAlive, later, awaitUntilNanos(request)).ask();
        return Relay.PENDING;
    }

    /**
     * Where a Durable Streams request is served: a stream lives on its path's rendezvous owner among the members
     * that take new runs, so no lookup is needed. Returns null: serve it here (this node owns it, or the request
     * is a peer's); {@link Relay#ANSWERED}: refused (503, this node has not heard from all its peers yet); any
     * other relay: the request (its body, then its answer, live reads included) is forwarded to the owner. On the
     * connection's loop.
     */
    public Relay routeStream(ChannelHandlerContext ctx, HttpRequest request, String path, boolean keepAlive,
            boolean fromPeer) {
        if (fromPeer) {
            return null;
        }
        if (!membership.settled()) {
            metrics.failed(ClusterMetrics.Failure.LOOKUP);
            replies.error(ctx, request, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "this node has not heard from all its peers yet; retry", false);
            return Relay.ANSWERED;
        }
        Membership.View v = membership.view();
        Member owner = Rendezvous.owner(path, v.forNewRuns());
        if (owner == null || owner.equals(v.self())) {
            return null;
        }
        // a stream has no earlier owner to look for: an unreachable owner is the client's 503 (it retries)
        return forward(ctx, request, owner, keepAlive, true, false, () -> false);
    }

    /** When a read that may wait for its run stops waiting; 0 for a request that does not wait. */
    private long awaitUntilNanos(HttpRequest request) {
        return awaitsRun(request) ? System.nanoTime() + awaitRunNanos : 0;
    }

    /**
     * A live read of a run's events ({@code GET .../events}, neither {@code ?live=false} nor {@code ?ifRunning=true}):
     * it may wait for the run.
     */
    private boolean awaitsRun(HttpRequest request) {
        if (awaitRunNanos <= 0 || !request.method().equals(HttpMethod.GET)) {
            return false;
        }
        String uri = request.uri();
        int q = uri.indexOf('?');
        return (q < 0 ? uri : uri.substring(0, q)).endsWith("/events") && (q < 0 || !uri.substring(q).matches(
                ".*[?&](live=false|ifRunning=true)(&.*)?"));
    }

    /**
     * One request's search for its run: asks the peers ({@link RunLocator#lookup}); a live read of a run that no
     * node holds yet (await-run) waits here instead of at some node's guess of the owner — asking again every
     * {@link #AWAIT_POLL_MS} and told at once if the run is created on this node — so it finds the run wherever it
     * is created (or restored by its publisher after its node died), whichever node's view placed it. On the run's
     * loop.
     */
    private final class Lookup implements RunWaiter {
        private final ChannelHandlerContext ctx;
        private final HttpRequest request;
        private final String runId;
        private final RunRegistry registry;
        private final boolean keepAlive;
        private final Consumer<Relay> later;
        private final long awaitUntilNanos;
        private final String query;
        private final List<String> credentials;
        private boolean waiting;
        private boolean waited;
        private boolean retried;
        private boolean decided;
        private ScheduledFuture<?> poll;

        Lookup(ChannelHandlerContext ctx, HttpRequest request, String runId, RunRegistry registry, boolean keepAlive,
                Consumer<Relay> later, long awaitUntilNanos) {
            this.ctx = ctx;
            this.request = request;
            this.runId = runId;
            this.registry = registry;
            this.keepAlive = keepAlive;
            this.later = later;
            this.awaitUntilNanos = awaitUntilNanos;
            int q = request.uri().indexOf('?');
            this.query = q < 0 ? null : request.uri().substring(q + 1);
            this.credentials = credentialsOf(request);
        }

        void ask() {
            locator.lookup(runId, query, credentials, ctx.channel().eventLoop(), this::found);
        }

        private void found(Member member, boolean held) {
            if (decided) {
                return;
            }
            Member self = membership.self();
            if (!ctx.channel().isActive()) {
                decide(Relay.ANSWERED);
            } else if (registry.get(runId) != null || registry.isGone(runId)) {
                decide(null);
            } else if (held) {
                decide(member.equals(self) ? null : forward(ctx, request, member, keepAlive, !waited, false, this));
            } else if (awaitUntilNanos != 0) {
                long leftNanos = awaitUntilNanos - System.nanoTime();
                if (leftNanos > 0) {
                    if (!waiting) {
                        waiting = true;
                        registry.await(runId, this);
                    }
                    waited = true;
                    poll = ctx.executor().schedule(this::ask, Math.min(TimeUnit.NANOSECONDS.toMillis(leftNanos),
                            AWAIT_POLL_MS), TimeUnit.MILLISECONDS);
                } else if (member == RunLocator.UNKNOWN) {
                    unknown();
                } else {
                    replies.error(ctx, request, Refusal.NOT_FOUND, HttpResponseStatus.NOT_FOUND,
                            "no run " + runId + " appeared within " + awaitRunMs + " ms", keepAlive);
                    decide(Relay.ANSWERED);
                }
            } else if (member == RunLocator.UNKNOWN) {
                unknown();
            } else if (member.equals(self)) {
                decide(null);
            } else {
                decide(forward(ctx, request, member, keepAlive, false, true, this));
            }
        }

        /**
         * The node this request was relayed to cannot be reached (it died; the view still lists it): forget where
         * the run was, and a read that may wait looks for it again (it waits for the run's restore) instead of
         * failing. True when it took the request over.
         */
        boolean retryElsewhere() {
            locator.forget(runId);
            if (!ctx.channel().isActive() || request.method().equals(HttpMethod.POST)) {
                return false; // a publish's body went to the other node: the publisher retries (503)
            }
            if (awaitUntilNanos == 0 || System.nanoTime() >= awaitUntilNanos) {
                if (retried) {
                    return false;
                }
                retried = true; // a status or delete: one more lookup, no waiting
                decided = false;
                ask();
                return true;
            }
            decided = false;
            waited = true;
            poll = ctx.executor().schedule(this::ask, AWAIT_POLL_MS, TimeUnit.MILLISECONDS);
            return true;
        }

        private void unknown() {
            metrics.failed(ClusterMetrics.Failure.LOOKUP);
            replies.error(ctx, request, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "a node that may hold run " + runId + " did not answer; retry", false);
            decide(Relay.ANSWERED);
        }

        private void decide(Relay relay) {
            decided = true;
            if (poll != null) {
                poll.cancel(false);
            }
            if (waiting) {
                waiting = false;
                registry.stopAwaiting(runId, this);
            }
            later.accept(relay);
        }

        @Override
        public void runCreated(Run run) {
            // the registry already forgot this waiter
            waiting = false;
            if (!decided) {
                decide(ctx.channel().isActive() ? null : Relay.ANSWERED);
            }
        }

        @Override
        public void serverDraining() {
            waiting = false;
            if (!decided) {
                replies.error(ctx, request, Refusal.DRAINING, HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "server is draining: run " + runId + " will not be created here", false);
                decide(Relay.ANSWERED);
            }
        }
    }

    /** The client's credentials to pass on with a peer request (name, value pairs), as its node would see them. */
    private static List<String> credentialsOf(HttpRequest request) {
        List<String> credentials = new ArrayList<>(6);
        for (CharSequence name : new CharSequence[] {HttpHeaderNames.AUTHORIZATION, HttpHeaderNames.COOKIE,
                HttpHeaderNames.ORIGIN}) {
            String value = request.headers().get(name);
            if (value != null) {
                credentials.add(name.toString());
                credentials.add(value);
            }
        }
        return credentials;
    }

    /** The other nodes' runs of a thread listing: at most one page from each, and whether any holds more. */
    public record PeerRuns(List<ThreadRun> runs, boolean more) {}

    /**
     * Asks every other live member for its page of the thread listing {@code request} (a client's, not a peer's:
     * those are answered from this node alone). Completes on an HTTP client thread; exceptionally when a member
     * did not answer with proof of the secret in time.
     */
    public CompletableFuture<PeerRuns> threadRunsOfPeers(HttpRequest request) {
        return listings.gather(request.uri(), credentialsOf(request)).thenApply(parts -> {
            List<ThreadRun> runs = new ArrayList<>();
            boolean more = false;
            for (ThreadListingPeers.Part p : parts) {
                runs.addAll(p.runs());
                more |= p.more();
            }
            return new PeerRuns(runs, more);
        });
    }

    /**
     * Relays the request to {@code target}; {@code held}: false when the read waited for its run to appear. If
     * the target cannot be reached, {@code lookup} looks again (a read that may wait) or the client gets 503.
     */
    private Relay forward(ChannelHandlerContext ctx, HttpRequest request, Member target, boolean keepAlive,
            boolean held, boolean placed, Lookup lookup) {
        return forward(ctx, request, target, keepAlive, held, placed, lookup::retryElsewhere);
    }

    /** As above; {@code unreachable}: asked when the target cannot be reached, true when it took the request over. */
    private Relay forward(ChannelHandlerContext ctx, HttpRequest request, Member target, boolean keepAlive,
            boolean held, boolean placed, BooleanSupplier unreachable) {
        metrics.forwarded(kind(request, held));
        return ForwardingSession.start(ctx, request, target, peers, membership, replies, auth, metrics, keepAlive,
                placed, unreachable);
    }

    private static ClusterMetrics.Forward kind(HttpRequest request, boolean held) {
        HttpMethod method = request.method();
        if (method.equals(HttpMethod.POST)) {
            return ClusterMetrics.Forward.PUBLISH;
        }
        if (method.equals(HttpMethod.DELETE)) {
            return ClusterMetrics.Forward.DELETE;
        }
        String uri = request.uri();
        int q = uri.indexOf('?');
        boolean events = (q < 0 ? uri : uri.substring(0, q)).endsWith("/events");
        if (!events) {
            return ClusterMetrics.Forward.STATUS;
        }
        return held ? ClusterMetrics.Forward.SUBSCRIBE : ClusterMetrics.Forward.AWAIT;
    }

    @Override
    public void close() {
        requests.close();
        membership.close();
    }
}
