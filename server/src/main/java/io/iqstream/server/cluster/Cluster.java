package io.iqstream.server.cluster;

import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.ThreadRun;
import io.iqstream.server.telemetry.Telemetry;
import io.iqstream.server.wire.HttpReplies;
import io.netty.handler.codec.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster part of a node ({@code --peers}): who the members are ({@link Membership}), the peer header that
 * proves a request or an answer comes from one ({@link #verifyPeer}, {@link PeerProofHandler}), the other nodes'
 * pages of a thread listing, and the {@link Forwarder} that decides where a run or stream request is served.
 * Started once, closed at shutdown; any thread.
 */
public final class Cluster implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);

    private final Membership membership;
    private final PeerAuth auth;
    private final PeerRequests requests;
    private final ThreadListingPeers listings;
    private final ClusterMetrics metrics;
    private final Forwarder forwarder;

    private Cluster(Membership membership, PeerAuth auth, PeerChannels peers, HttpReplies replies,
            ClusterMetrics metrics, long awaitRunMs, boolean streamsOnDisk, Telemetry telemetry) {
        this.membership = membership;
        this.auth = auth;
        this.metrics = metrics;
        this.requests = new PeerRequests(membership, auth);
        this.listings = new ThreadListingPeers(membership, requests);
        this.forwarder = new Forwarder(membership, auth, peers, new Locator(membership, requests, streamsOnDisk),
                replies, metrics, awaitRunMs, telemetry);
    }

    /** Starts the cluster part when {@code --peers} is given; null otherwise (a single node, as before). */
    public static Cluster start(ServerConfig config, String transportName, HttpReplies replies, Metrics metrics,
            Telemetry telemetry) {
        if (!config.clustered()) {
            return null;
        }
        Member self = Member.parse(config.advertise());
        metrics.clustered();
        PeerAuth auth = new PeerAuth(config.clusterSecret(), self);
        Membership membership = new Membership(self, config.peers(), auth, metrics.cluster);
        LOG.info("cluster: this node is {}, peers {}", self, config.peers());
        return new Cluster(membership, auth,
                new PeerChannels(transportName, metrics.cluster), replies, metrics.cluster, config.awaitRunMs(),
                config.storage().onDisk(), telemetry);
    }

    /** Starts watching the members; call once this node's listener is bound (it probes itself as well). */
    public void begin() {
        membership.start();
    }

    public Membership membership() {
        return membership;
    }
    /** Where a run or stream request is served: here, or relayed to its holder. */
    public Forwarder forwarder() {
        return forwarder;
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

    /** The other nodes' runs of a thread listing: at most one page from each, and whether any holds more. */
    public record PeerRuns(List<ThreadRun> runs, boolean more) {}

    /**
     * Asks every other live member for its page of the thread listing {@code request} (a client's, not a peer's:
     * those are answered from this node alone). Completes on an HTTP client thread; exceptionally when a member
     * did not answer with proof of the secret in time.
     */
    public CompletableFuture<PeerRuns> threadRunsOfPeers(HttpRequest request) {
        return listings.gather(request.uri(), Forwarder.credentialsOf(request)).thenApply(parts -> {
            List<ThreadRun> runs = new ArrayList<>();
            boolean more = false;
            for (ThreadListingPeers.Part p : parts) {
                runs.addAll(p.runs());
                more |= p.more();
            }
            return new PeerRuns(runs, more);
        });
    }

    @Override
    public void close() {
        requests.close();
        membership.close();
    }
}
