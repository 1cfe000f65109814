package io.iqstream.server.cluster;

import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.run.RunWaiter;
import io.iqstream.server.telemetry.RelayHop;
import io.iqstream.server.telemetry.Telemetry;
import io.iqstream.server.wire.HttpReplies;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Where a run or stream request is served: here, or relayed to the node that holds it. The entry points are
 * {@link #route}, called where a run request is about to be served (on the run's worker loop, after the token was
 * checked), and {@link #routeStream}, its counterpart for a Durable Streams request (on the connection's loop, after
 * the token was checked): each says whether to serve the request here or relays it to the node that holds the run
 * or the stream ({@link ForwardingSession}).
 *
 * <p>Rules, the same for runs and streams: a request that carries a peer header verified by
 * {@link Cluster#verifyPeer} was forwarded by a peer and is served here, never forwarded again (one that does not
 * verify is refused before it gets here); a run held here (or remembered as expired here), a stream held here, is
 * served here; anything else goes where {@link Locator} finds it — the owner of a new one being the rendezvous
 * choice among the members that take new runs ({@link Membership}). Any thread may hold it; {@link #route} runs on
 * the run's loop.
 */
public final class Forwarder {
    private final Membership membership;
    private final PeerAuth auth;
    private final PeerChannels peers;
    private final Locator locator;
    private final HttpReplies replies;
    private final ClusterMetrics metrics;
    private final long awaitRunMs;
    /** The server's traces: each relay is a span when on. */
    private final Telemetry telemetry;
    private final long awaitRunNanos;

    /**
     * Header of a relayed request whose sender's lookup found no node holding the run or stream: the receiver may
     * create it (a publish, a stream's PUT) or wait for it (or answer 404). Without it, a receiver that does not
     * hold it answers {@link #NOT_HELD}.
     */
    static final String PLACED = "X-IQStream-Placed";
    /** Header of a peer's 404 for a relayed request of a run or stream it does not hold: the sender looks again. */
    static final String NOT_HELD = "X-IQStream-Not-Held";

    /** The path prefix of a durable stream (a fork's source names one). */
    private static final String STREAM_PREFIX = "/v1/stream/";

    /** How often a read waiting for a run that no node holds yet asks the peers again. */
    static final long AWAIT_POLL_MS = 200;

    Forwarder(Membership membership, PeerAuth auth, PeerChannels peers, Locator locator, HttpReplies replies,
            ClusterMetrics metrics, long awaitRunMs, Telemetry telemetry) {
        this.membership = membership;
        this.auth = auth;
        this.peers = peers;
        this.locator = locator;
        this.replies = replies;
        this.metrics = metrics;
        this.awaitRunMs = awaitRunMs;
        this.telemetry = telemetry;
        this.awaitRunNanos = TimeUnit.MILLISECONDS.toNanos(awaitRunMs);
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
            if (isLocate(request)) {
                answerLocate(ctx, request, registry.get(runId) != null || registry.isGone(runId), keepAlive);
                return Relay.ANSWERED;
            }
            if (registry.get(runId) == null && !registry.isGone(runId) && !request.headers().contains(PLACED)) {
                return notHeld(ctx, request, "run " + runId, keepAlive);
            }
            return null;
        }
        if (registry.get(runId) != null || registry.isGone(runId)) {
            return null;
        }
        if (!membership.settled()) {
            // just started: until every peer answered once, a run created here could be one that another node owns
            return notSettled(ctx, request);
        }
        int q = request.uri().indexOf('?');
        String locateTarget = "/v1/runs/" + runId + (q < 0 ? "" : request.uri().substring(q));
        return new Lookup(ctx, request, runId, "run " + runId, locateTarget, credentialsOf(request),
                () -> registry.get(runId) != null || registry.isGone(runId), registry, keepAlive, later,
                awaitUntilNanos(request)).start();
    }

    /** Whether a peer's request is a lookup ({@link Locator#LOCATE}): "do you hold it?", not to be served. */
    public static boolean isLocate(HttpRequest request) {
        return request.headers().contains(Locator.LOCATE);
    }

    /**
     * Answers a verified peer's lookup: 200 when this node holds the run or stream, else 404. For a stream it is
     * answered before any token check — the asking node checked the client's token before it asked, and the
     * request it then relays is checked here again; a lookup says only whether this node holds the path.
     */
    public void answerLocate(ChannelHandlerContext ctx, HttpRequest request, boolean held, boolean keepAlive) {
        replies.json(ctx, request, held ? HttpResponseStatus.OK : HttpResponseStatus.NOT_FOUND,
                "{\"held\":" + held + "}", keepAlive);
    }

    /**
     * A peer relayed a request here because it remembered {@code what} here (this node may have restarted or
     * deleted it since): never awaited or created on that memory; 404 {@link #NOT_HELD}, and the sender looks
     * again.
     */
    private Relay notHeld(ChannelHandlerContext ctx, HttpRequest request, String what, boolean keepAlive) {
        FullHttpResponse r = HttpReplies.response(HttpResponseStatus.NOT_FOUND, "application/json",
                "{\"error\":\"not_held\",\"message\":\"this node does not hold " + what + "\"}");
        r.headers().set(NOT_HELD, "1");
        replies.send(ctx, request, r, keepAlive);
        return Relay.ANSWERED;
    }

    /**
     * Where a Durable Streams request is served: on the node that holds the stream. A stream stays on the node that
     * created it (its path's rendezvous owner then) when the membership changes, so one not held here is looked for
     * at the peers ({@link Locator}, as a run is) and the request relayed to its holder; held by none, it goes to
     * the path's rendezvous owner among the members that take new runs (which creates it on a PUT, or answers 404),
     * so a PUT never makes a second copy beside a live holder. Returns null: serve it here; {@link Relay#ANSWERED}:
     * answered (503: this node has not heard from all its peers yet, or a peer that may hold the stream did not
     * answer; 404 {@link #NOT_HELD} to a peer that remembered the stream here); {@link Relay#PENDING}: the peers are
     * being asked, {@code later} gets the outcome (null or a relay) on this loop; any other relay: the request (its
     * body, then its answer, live reads included) is being forwarded. {@code path} is the decoded path the stream is
     * held by, {@code rawPath} the path as sent (what a lookup asks for); {@code forkSource} the stream path a PUT
     * forks (null: none): a fork no node holds yet is made where its source is, since it reads its source's bytes
     * in place; {@code holds} asks this node's streams. On the connection's loop.
     */
    public Relay routeStream(ChannelHandlerContext ctx, HttpRequest request, String path, String rawPath,
            String forkSource, Predicate<String> holds, boolean keepAlive, boolean fromPeer, Consumer<Relay> later) {
        BooleanSupplier heldHere = () -> holds.test(path);
        if (fromPeer) {
            return heldHere.getAsBoolean() || request.headers().contains(PLACED) ? null
                    : notHeld(ctx, request, "stream " + path, keepAlive);
        }
        if (heldHere.getAsBoolean()) {
            return null;
        }
        if (!membership.settled()) {
            return notSettled(ctx, request);
        }
        // no credentials: a peer answers a verified peer's stream lookup before its token check (answerLocate)
        Lookup lookup = new Lookup(ctx, request, path, "stream " + path, rawPath, List.of(), heldHere, null,
                keepAlive, later, 0);
        if (forkSource != null && forkSource.startsWith(STREAM_PREFIX)) {
            lookup.forkOf(forkSource, holds);
        }
        return lookup.start();
    }

    /** 503 {@code peer_unavailable}: this node has not heard from every peer yet, so it cannot tell who holds it. */
    private Relay notSettled(ChannelHandlerContext ctx, HttpRequest request) {
        metrics.failed(ClusterMetrics.Failure.LOOKUP);
        replies.error(ctx, request, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                "this node has not heard from all its peers yet; retry", false);
        return Relay.ANSWERED;
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
     * One request's search for its run or stream: asks the peers ({@link Locator#lookup}); a live read of a run that
     * no node holds yet (await-run) waits here instead of at some node's guess of the owner — asking again every
     * {@link #AWAIT_POLL_MS} and told at once if the run is created on this node — so it finds the run wherever it
     * is created (or restored by its publisher after its node died), whichever node's view placed it. A stream's
     * request never waits (the protocol has no such read: a stream no node holds is 404, or created by a PUT). On
     * the loop that routes the request (the run's; the stream's connection's).
     */
    private final class Lookup implements RunWaiter {
        private final ChannelHandlerContext ctx;
        private final HttpRequest request;
        /** The locator's key: the run id, or the stream's path. */
        private final String key;
        /** What is looked for, for messages: "run {id}", "stream {path}". */
        private final String what;
        private final String locateTarget;
        private final List<String> credentials;
        /** Whether this node holds it now (it may be created here while the peers are asked). */
        private final BooleanSupplier heldHere;
        /** The run's registry, where a read that may wait waits; null for a stream (it never waits). */
        private final RunRegistry registry;
        private final boolean keepAlive;
        private final Consumer<Relay> later;
        private final long awaitUntilNanos;
        private boolean waiting;
        private boolean waited;
        private boolean retried;
        private boolean decided;
        private ScheduledFuture<?> poll;
        /** A fork's source path, looked up once no node holds the fork's own path; null: not a fork. */
        private String forkSource;
        private Predicate<String> holds;

        Lookup(ChannelHandlerContext ctx, HttpRequest request, String key, String what, String locateTarget,
                List<String> credentials, BooleanSupplier heldHere, RunRegistry registry, boolean keepAlive,
                Consumer<Relay> later, long awaitUntilNanos) {
            this.ctx = ctx;
            this.request = request;
            this.key = key;
            this.what = what;
            this.locateTarget = locateTarget;
            this.credentials = credentials;
            this.heldHere = heldHere;
            this.registry = registry;
            this.keepAlive = keepAlive;
            this.later = later;
            this.awaitUntilNanos = awaitUntilNanos;
        }

        /** This request (a PUT) creates a fork of {@code source}: it is made where the source is. */
        void forkOf(String source, Predicate<String> holdsHere) {
            this.forkSource = source;
            this.holds = holdsHere;
        }

        /**
         * The first decision: where the locator remembers it (relayed there), here when this node is alone, else
         * the peers are asked ({@link Relay#PENDING}: {@code later} gets the outcome).
         */
        Relay start() {
            Member target = locator.quick(key);
            if (target != null) {
                return target.equals(membership.self()) ? null
                        : forward(ctx, request, target, keepAlive, true, false, this);
            }
            ask();
            return Relay.PENDING;
        }

        void ask() {
            locator.lookup(key, locateTarget, credentials, ctx.channel().eventLoop(), this::found);
        }

        private void found(Member member, boolean held) {
            if (decided) {
                return;
            }
            Member self = membership.self();
            if (!ctx.channel().isActive()) {
                decide(Relay.ANSWERED);
            } else if (heldHere.getAsBoolean()) {
                decide(null);
            } else if (held) {
                decide(member.equals(self) ? null : forward(ctx, request, member, keepAlive, !waited, false, this));
            } else if (awaitUntilNanos != 0) {
                long leftNanos = awaitUntilNanos - System.nanoTime();
                if (leftNanos > 0) {
                    if (!waiting) {
                        waiting = true;
                        registry.await(key, this);
                    }
                    waited = true;
                    poll = ctx.executor().schedule(this::ask, Math.min(TimeUnit.NANOSECONDS.toMillis(leftNanos),
                            AWAIT_POLL_MS), TimeUnit.MILLISECONDS);
                } else if (member == Locator.UNKNOWN) {
                    unknown();
                } else {
                    replies.error(ctx, request, Refusal.NOT_FOUND, HttpResponseStatus.NOT_FOUND,
                            "no " + what + " appeared within " + awaitRunMs + " ms", keepAlive);
                    decide(Relay.ANSWERED);
                }
            } else if (member == Locator.UNKNOWN) {
                unknown();
            } else if (forkSource != null) {
                findForkSource(member);
            } else if (member.equals(self)) {
                decide(null);
            } else {
                decide(forward(ctx, request, member, keepAlive, false, true, this));
            }
        }

        /**
         * No node holds the fork's path: it is created where its source is (it reads the source's bytes there), here
         * if this node holds the source, else at the node the lookup of the source finds; a source no node holds
         * goes to {@code owner}, the fork path's owner (which answers the protocol's 404). The source's holder is
         * the fork's holder from then on, found by the lookup as any stream.
         */
        private void findForkSource(Member owner) {
            String source = forkSource;
            if (holds.test(source)) {
                decide(null);
                return;
            }
            locator.lookup(source, PeerTarget.pathOf(source), List.of(), ctx.channel().eventLoop(), (m, held) -> {
                if (decided) {
                    return;
                }
                if (!ctx.channel().isActive()) {
                    decide(Relay.ANSWERED);
                } else if (heldHere.getAsBoolean()) {
                    decide(null);
                } else if (m == Locator.UNKNOWN) {
                    unknown();
                } else {
                    Member target = held ? m : owner;
                    decide(target.equals(membership.self()) ? null
                            : forward(ctx, request, target, keepAlive, false, true, this));
                }
            });
        }

        /**
         * The node this request was relayed to cannot be reached (it died; the view still lists it), or no longer
         * holds what it was remembered for ({@link #NOT_HELD}): forget where it was, and a read that may wait looks
         * for it again (it waits for the run's restore) instead of failing. True when it took the request over.
         */
        boolean retryElsewhere() {
            locator.forget(key);
            if (!ctx.channel().isActive() || hasBody(request)) {
                return false; // a publish's, an append's body went to the other node: the client retries (503)
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
                    "a node that may hold " + what + " did not answer; retry", false);
            decide(Relay.ANSWERED);
        }

        private void decide(Relay relay) {
            decided = true;
            if (poll != null) {
                poll.cancel(false);
            }
            if (waiting) {
                waiting = false;
                registry.stopAwaiting(key, this);
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
                        "server is draining: " + what + " will not be created here", false);
                decide(Relay.ANSWERED);
            }
        }
    }

    /** Whether a request carries a body (a publish, an append, a create with data): it cannot be relayed twice. */
    private static boolean hasBody(HttpRequest request) {
        return request.method().equals(HttpMethod.POST) || HttpUtil.isTransferEncodingChunked(request)
                || HttpUtil.getContentLength(request, 0L) > 0;
    }

    /** The client's credentials to pass on with a peer request (name, value pairs), as its node would see them. */
    static List<String> credentialsOf(HttpRequest request) {
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

    /**
     * Relays the request to {@code target}; {@code held}: false when the read waited for its run to appear. If
     * the target cannot be reached (or no longer holds it), {@code lookup} looks again (a request without a body)
     * or the client gets 503.
     */
    private Relay forward(ChannelHandlerContext ctx, HttpRequest request, Member target, boolean keepAlive,
            boolean held, boolean placed, Lookup lookup) {
        metrics.forwarded(kind(request, held));
        RelayHop hop = RelayHop.start(telemetry, request, target.toString());
        return ForwardingSession.start(ctx, request, target, peers, membership, replies, auth, metrics, keepAlive,
                placed, lookup::retryElsewhere, hop);
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

}
