package io.iqstream.server.config;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;

/**
 * The server's whole configuration, validated once at start by {@link ConfigParser}; immutable, any thread.
 * Units are in the names. {@code jsonLogs}: {@code --log-format json}; {@code tracing}: the {@code OTEL_*}
 * variables ask for traces ({@link TracingEnvironment#asksForTraces}); {@code storm}: what spreads and absorbs a
 * reconnect storm ({@code --retry-jitter}, {@code --listen-backlog}).
 */
public record ServerConfig(
        String host,
        int port,
        int workers,
        String transport,
        boolean authEnabled,
        String jwtSecret,
        Path jwtPublicKey,
        Path jwks,
        String jwtIssuer,
        String jwtAudience,
        long retentionMs,
        long tombstoneMs,
        long awaitRunMs,
        long publisherTimeoutMs,
        long runIdleTimeoutMs,
        long memoryBudgetBytes,
        long maxEventBytes,
        long maxRunBytes,
        int maxSubscribers,
        long maxSubscriberLagMs,
        boolean compressLog,
        long heartbeatMs,
        long retryMs,
        long drainTimeoutMs,
        List<String> corsOrigins,
        DemoSettings demo,
        String logLevel,
        long headerTimeoutMs,
        long bodyTimeoutMs,
        long idleTimeoutMs,
        int maxConnections,
        int adminPort,
        boolean allowTokensWithoutExp,
        URI jwksUrl,
        long jwksTimeoutMs,
        long jwksRefreshMinMs,
        long jwksRefreshMaxMs,
        long jwksMaxAgeMs,
        Path jwksCa,
        List<String> peers,
        String advertise,
        String clusterSecret,
        int warmupRequests,
        boolean durableStreamsOpen,
        long durableStreamsLongPollMs,
        long sseLifetimeMs,
        StorageSettings storage,
        boolean jsonLogs,
        boolean tracing,
        StormSettings storm) {

    /** Largest {@code --max-event-bytes}: an event is held and framed in one buffer. */
    public static final long MAX_EVENT_BYTES_LIMIT = 64L << 20;
    /** Largest {@code --max-run-bytes}: offsets into a run's log are 32-bit. */
    public static final long MAX_RUN_BYTES_LIMIT = 1L << 30;
    /** {@link #adminPort} when there is no admin listener. */
    public static final int NO_ADMIN_PORT = -1;

    /** True when {@code --peers} names a cluster (forwarding between nodes is on). */
    public boolean clustered() {
        return !peers.isEmpty();
    }

    /** True when no key is configured and auth is on: the server makes its own secret and prints tokens. */
    public boolean devMode() {
        return authEnabled && jwtSecret == null && jwtPublicKey == null && jwks == null && jwksUrl == null;
    }

    /** A copy with the given secret (dev mode fills in its generated one). */
    public ServerConfig withJwtSecret(String secret) {
        return new ServerConfig(host, port, workers, transport, authEnabled, secret, jwtPublicKey, jwks, jwtIssuer,
                jwtAudience, retentionMs, tombstoneMs, awaitRunMs, publisherTimeoutMs, runIdleTimeoutMs,
                memoryBudgetBytes, maxEventBytes, maxRunBytes, maxSubscribers, maxSubscriberLagMs, compressLog, heartbeatMs, retryMs,
                drainTimeoutMs, corsOrigins, demo, logLevel, headerTimeoutMs, bodyTimeoutMs, idleTimeoutMs, maxConnections, adminPort,
                allowTokensWithoutExp, jwksUrl, jwksTimeoutMs, jwksRefreshMinMs, jwksRefreshMaxMs, jwksMaxAgeMs, jwksCa,
                peers, advertise, clusterSecret, warmupRequests, durableStreamsOpen, durableStreamsLongPollMs,
                sseLifetimeMs, storage, jsonLogs, tracing, storm);
    }

    /** A copy with the given memory budget (resolved from the container when the flag is absent). */
    public ServerConfig withMemoryBudgetBytes(long bytes) {
        return new ServerConfig(host, port, workers, transport, authEnabled, jwtSecret, jwtPublicKey, jwks, jwtIssuer,
                jwtAudience, retentionMs, tombstoneMs, awaitRunMs, publisherTimeoutMs, runIdleTimeoutMs,
                bytes, maxEventBytes, maxRunBytes, maxSubscribers, maxSubscriberLagMs, compressLog, heartbeatMs, retryMs,
                drainTimeoutMs, corsOrigins, demo, logLevel, headerTimeoutMs, bodyTimeoutMs, idleTimeoutMs, maxConnections, adminPort,
                allowTokensWithoutExp, jwksUrl, jwksTimeoutMs, jwksRefreshMinMs, jwksRefreshMaxMs, jwksMaxAgeMs, jwksCa,
                peers, advertise, clusterSecret, warmupRequests, durableStreamsOpen, durableStreamsLongPollMs,
                sseLifetimeMs, storage, jsonLogs, tracing, storm);
    }
}
