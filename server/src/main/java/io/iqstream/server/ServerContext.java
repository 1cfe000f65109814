package io.iqstream.server;

import io.iqstream.server.admission.ListingSlots;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.auth.Authorizer;
import io.iqstream.server.cluster.Cluster;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.demo.DemoSite;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.stream.DurableStreams;
import io.iqstream.server.stream.StreamExchange;
import io.iqstream.server.telemetry.Telemetry;
import io.iqstream.server.wire.CorsPolicy;
import io.iqstream.server.wire.HttpReplies;
import io.iqstream.server.wire.RetryLines;
import io.iqstream.server.worker.Workers;
import io.netty.buffer.ByteBuf;

/**
 * The shared, thread-safe pieces every connection needs: configuration, workers, authorization, metrics, the
 * memory budget, and the draining flag. Built once at start.
 */
public final class ServerContext {
    private final ServerConfig config;
    private final Workers workers;
    private final Authorizer authorizer;
    private final Metrics metrics;
    private final MemoryBudget budget;
    private final CorsPolicy cors;
    private final HttpReplies replies;
    private final RetryLines retryLines;
    private volatile DemoSite demo;
    private volatile Cluster cluster;
    private volatile DurableStreams durableStreams;
    private volatile StreamExchange.Settings streamSettings;
    private volatile boolean draining;
    private volatile boolean warmingUp;
    private volatile Telemetry telemetry = Telemetry.OFF;
    private final ListingSlots threadListings = ListingSlots.forThreadListings();

    public ServerContext(ServerConfig config, Workers workers, Authorizer authorizer, Metrics metrics,
            MemoryBudget budget) {
        this.config = config;
        this.workers = workers;
        this.authorizer = authorizer;
        this.metrics = metrics;
        this.budget = budget;
        this.cors = new CorsPolicy(config.corsOrigins());
        this.replies = new HttpReplies(cors);
        this.retryLines = new RetryLines(config.retryMs(), config.storm().retryJitterMs());
    }

    public ServerConfig config() {
        return config;
    }

    public Workers workers() {
        return workers;
    }

    public Authorizer authorizer() {
        return authorizer;
    }

    public Metrics metrics() {
        return metrics;
    }

    public MemoryBudget budget() {
        return budget;
    }

    public CorsPolicy cors() {
        return cors;
    }

    /**
     * An SSE stream's first line, {@code retry: <--retry plus a random part of --retry-jitter>} and its blank line,
     * encoded once at start: each stream writes a duplicate of one (no string building or copy per stream); a
     * write's release leaves it whole ({@link RetryLines}).
     */
    public ByteBuf sseRetryLine() {
        return retryLines.next();
    }

    public HttpReplies replies() {
        return replies;
    }

    /** Thread listings being gathered now ({@code GET /v1/threads/{id}/runs}), capped and shared by caller. */
    public ListingSlots threadListings() {
        return threadListings;
    }

    /** The demo site, or null when the demo is off. */
    public DemoSite demo() {
        return demo;
    }

    void demo(DemoSite site) {
        this.demo = site;
    }

    /** The cluster part ({@code --peers}), or null on a single node. */
    public Cluster cluster() {
        return cluster;
    }

    void cluster(Cluster c) {
        this.cluster = c;
    }

    /** The Durable Streams of this node ({@code /v1/stream/}). */
    public DurableStreams durableStreams() {
        return durableStreams;
    }

    /** What a Durable Streams request is served with. */
    public StreamExchange.Settings streamSettings() {
        return streamSettings;
    }

    /** Sets the node's Durable Streams, once, before a port accepts (the start-up's, or the warm-up's own). */
    public void durableStreams(DurableStreams streams) {
        this.durableStreams = streams;
        this.streamSettings = new StreamExchange.Settings(streams, metrics, cors, replies, config.durableStreamsOpen(),
                config.durableStreamsLongPollMs(), config.sseLifetimeMs(), config.maxEventBytes());
    }

    /** The server's traces ({@link Telemetry#OFF} unless the OTEL_* variables ask for them). */
    public Telemetry telemetry() {
        return telemetry;
    }

    void telemetry(Telemetry t) {
        this.telemetry = t;
    }

    /** True while the start-up's JIT warm-up runs: the main port is bound but does not accept yet. */
    public boolean isWarmingUp() {
        return warmingUp;
    }

    void warmingUp(boolean on) {
        this.warmingUp = on;
    }

    public boolean isDraining() {
        return draining;
    }

    void startDraining() {
        draining = true;
    }
}
