package io.iqstream.server.cluster;

import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.run.ThreadRun;
import io.iqstream.server.wire.HttpReplies;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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

    private Cluster(Membership membership, PeerAuth auth, PeerChannels peers, HttpReplies replies,
            ClusterMetrics metrics) {
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
                new PeerChannels(transportName, metrics.cluster), replies, metrics.cluster);
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
        Member self = membership.self();
        Member target = locator.quick(runId);
        if (target != null) {
            return target.equals(self) ? null : forward(ctx, request, target, keepAlive, true);
        }
        int q = request.uri().indexOf('?');
        List<String> credentials = credentialsOf(request);
        locator.lookup(runId, q < 0 ? null : request.uri().substring(q + 1), credentials, ctx.channel().eventLoop(),
                (member, held) -> {
                    if (!ctx.channel().isActive()) {
                        later.accept(Relay.ANSWERED);
                    } else if (member == RunLocator.UNKNOWN) {
                        metrics.failed(ClusterMetrics.Failure.LOOKUP);
                        replies.error(ctx, request, "peer_unavailable", HttpResponseStatus.SERVICE_UNAVAILABLE,
                                "a node that may hold run " + runId + " did not answer; retry", false);
                        later.accept(Relay.ANSWERED);
                    } else if (member.equals(self) || registry.get(runId) != null) {
                        later.accept(null);
                    } else {
                        later.accept(forward(ctx, request, member, keepAlive, held));
                    }
                });
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
        return forward(ctx, request, owner, keepAlive, true);
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

    /** Relays the request to {@code target}; {@code held}: false when a lookup found no node holding the run. */
    private Relay forward(ChannelHandlerContext ctx, HttpRequest request, Member target, boolean keepAlive,
            boolean held) {
        metrics.forwarded(kind(request, held));
        return ForwardingSession.start(ctx, request, target, peers, membership, replies, auth, metrics, keepAlive);
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
