package io.iqstream.server.config;

/**
 * What spreads and absorbs a reconnect storm: every browser cut at once (a balancer or node restart) comes back
 * after its {@code retry:} interval with Last-Event-ID. Immutable, any thread.
 *
 * @param retryJitterMs {@code --retry-jitter}: each SSE stream's {@code retry:} is {@code --retry} plus a random
 *     part of this, so the browsers of one cut come back spread over it; 0: every stream gets {@code --retry}
 * @param listenBacklog {@code --listen-backlog}: the accept queue asked of the kernel (it caps it at
 *     {@code net.core.somaxconn}); a storm's connections wait there while the workers accept them
 */
public record StormSettings(long retryJitterMs, int listenBacklog) {

    /** Largest {@code --retry-jitter}: a browser should not wait minutes for its first reconnect. */
    public static final long MAX_RETRY_JITTER_MS = 60_000;

    public StormSettings {
        if (retryJitterMs < 0 || retryJitterMs > MAX_RETRY_JITTER_MS) {
            throw new IllegalArgumentException("retry jitter must be within 0..60000 ms, not " + retryJitterMs);
        }
        if (listenBacklog < 1) {
            throw new IllegalArgumentException("listen backlog must be at least 1, not " + listenBacklog);
        }
    }
}
