package io.iqstream.server.metrics;

import java.util.concurrent.atomic.LongAdder;

/**
 * The metrics of the cluster part ({@code --peers}), named once here and rendered by {@link Metrics#render} only
 * on a clustered node: requests relayed to the node that holds their run, by kind; relays that failed, by why;
 * peer connections open; members live, ready and suspected as this node's last probe saw them; peers whose
 * view disagrees, view changes, runs restored. Any thread ({@link LongAdder}s
 * and volatile gauges).
 */
public final class ClusterMetrics {
    /** What a relayed request was. */
    public enum Forward {
        /** {@code GET /v1/runs/{id}/events} for a run a peer holds. */
        SUBSCRIBE("subscribe"),
        /**
         * {@code GET /v1/runs/{id}/events} for a run that no node held when the read came: it waited (--await-run)
         * at the node it reached, asking the peers, and was relayed to the node where the run appeared.
         */
        AWAIT("await"),
        /** {@code POST /v1/runs/{id}/events}. */
        PUBLISH("publish"),
        /** {@code GET /v1/runs/{id}}. */
        STATUS("status"),
        /** {@code DELETE /v1/runs/{id}}. */
        DELETE("delete");

        private final String label;

        Forward(String label) {
            this.label = label;
        }
    }

    /** Why a relay failed. */
    public enum Failure {
        /** The peer could not be connected to (client answered 503 peer_unavailable). */
        CONNECT("connect"),
        /** The peer's connection broke before its answer was whole (503, or the client's connection closed). */
        BROKEN("broken"),
        /** A peer that may hold the run did not answer the lookup (503 peer_unavailable). */
        LOOKUP("lookup"),
        /**
         * A peer request or answer without valid proof of --cluster-secret: a request refused 403
         * {@code peer_unproven}, an answer not believed (its node is suspected, the client answered 502).
         */
        UNPROVEN("unproven");

        private final String label;

        Failure(String label) {
            this.label = label;
        }
    }

    private final LongAdder[] forwarded = new LongAdder[Forward.values().length];
    private final LongAdder[] failures = new LongAdder[Failure.values().length];
    /** Connections to peers open now (pooled or borrowed). */
    public final LongAdder peerConnectionsOpen = new LongAdder();
    private volatile int membersLive;
    private volatile int membersReady;
    private volatile int membersSuspected;
    private volatile int viewsDisagreeing;
    private final LongAdder viewChanges = new LongAdder();
    private final LongAdder restores = new LongAdder();

    public ClusterMetrics() {
        for (int i = 0; i < forwarded.length; i++) {
            forwarded[i] = new LongAdder();
        }
        for (int i = 0; i < failures.length; i++) {
            failures[i] = new LongAdder();
        }
    }

    /** Counts one request relayed to a peer. */
    public void forwarded(Forward kind) {
        forwarded[kind.ordinal()].increment();
    }

    public long forwardedCount(Forward kind) {
        return forwarded[kind.ordinal()].sum();
    }

    /** Counts one relay that failed. */
    public void failed(Failure why) {
        failures[why.ordinal()].increment();
    }

    public long failureCount(Failure why) {
        return failures[why.ordinal()].sum();
    }

    /**
     * The members of this node's latest view (itself included): alive, ready (taking new runs), and suspected
     * (alive members that missed their latest probes, kept until surely dead).
     */
    public void members(int live, int ready, int suspected) {
        membersLive = live;
        membersReady = ready;
        membersSuspected = suspected;
    }

    /** How many peers last reported a ready set other than this node's. */
    public void viewsDisagreeing(int peers) {
        viewsDisagreeing = peers;
    }

    /** Counts one change of this node's view (its ready or alive set). */
    public void viewChanged() {
        viewChanges.increment();
    }

    public long viewChangeCount() {
        return viewChanges.sum();
    }

    /** Counts one run restored here by its publisher ({@code X-IQStream-Restore}) after its node was lost. */
    public void restored() {
        restores.increment();
    }

    public long restoreCount() {
        return restores.sum();
    }

    void render(StringBuilder sb) {
        sb.append("# HELP iqstream_cluster_forwarded_total Requests relayed to the peer that holds their run, by"
                + " kind.\n");
        sb.append("# TYPE iqstream_cluster_forwarded_total counter\n");
        for (Forward f : Forward.values()) {
            sb.append("iqstream_cluster_forwarded_total{kind=\"").append(f.label).append("\"} ")
                    .append(forwarded[f.ordinal()].sum()).append('\n');
        }
        sb.append("# HELP iqstream_cluster_forward_failures_total Relays that failed, by reason.\n");
        sb.append("# TYPE iqstream_cluster_forward_failures_total counter\n");
        for (Failure f : Failure.values()) {
            sb.append("iqstream_cluster_forward_failures_total{reason=\"").append(f.label).append("\"} ")
                    .append(failures[f.ordinal()].sum()).append('\n');
        }
        Metrics.gauge(sb, "iqstream_cluster_peer_connections_open", "Connections to peers open (pooled or in use).",
                peerConnectionsOpen.sum());
        sb.append("# HELP iqstream_cluster_members Cluster members in this node's view (itself included), by"
                + " state: live (answering), ready (taking new runs).\n");
        sb.append("# TYPE iqstream_cluster_members gauge\n");
        sb.append("iqstream_cluster_members{state=\"live\"} ").append(membersLive).append('\n');
        sb.append("iqstream_cluster_members{state=\"ready\"} ").append(membersReady).append('\n');
        sb.append("iqstream_cluster_members{state=\"suspected\"} ").append(membersSuspected).append('\n');
        Metrics.gauge(sb, "iqstream_cluster_views_disagreeing", "Peers whose last reported ready set differs from"
                + " this node's (0 when the cluster agrees).", viewsDisagreeing);
        sb.append("# HELP iqstream_cluster_view_changes_total Changes of this node's view (ready or alive set).\n");
        sb.append("# TYPE iqstream_cluster_view_changes_total counter\n");
        sb.append("iqstream_cluster_view_changes_total ").append(viewChanges.sum()).append('\n');
        sb.append("# HELP iqstream_cluster_restores_total Runs restored here by their publisher after the node that"
                + " held them was lost.\n");
        sb.append("# TYPE iqstream_cluster_restores_total counter\n");
        sb.append("iqstream_cluster_restores_total ").append(restores.sum()).append('\n');
    }
}
