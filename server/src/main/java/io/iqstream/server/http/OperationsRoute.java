package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.wire.HttpReplies;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * The operations endpoints: {@code /healthz} (the process answers), {@code /readyz} (503 while the start-up's
 * warm-up runs, while draining, with {@code --peers} until the membership has settled, with
 * the signing keys not loaded or stale, or with the memory budget full), {@code /metrics} (Prometheus text). Served on the main port and on the admin port.
 * Stateless; reads only thread-safe state, so it answers on any loop (the admin port's is the acceptor's).
 */
public final class OperationsRoute {
    private OperationsRoute() {}

    /** Answers {@code path} if it is an operations endpoint; false (nothing written) otherwise. */
    public static boolean answer(ServerContext server, ChannelHandlerContext ctx, HttpRequest request, String path,
            boolean keepAlive) {
        HttpReplies replies = server.replies();
        switch (path) {
            case "/healthz" -> replies.text(ctx, request, HttpResponseStatus.OK, "text/plain", "ok\n", keepAlive);
            case "/readyz" -> {
                if (server.isWarmingUp()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                            "warming up\n", keepAlive);
                } else if (server.isDraining()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain", "draining\n",
                            keepAlive);
                } else if (server.cluster() != null && !server.cluster().membership().settled()) {
                    // --peers: until every peer answered once, a run request here could be answered
                    // 503 peer_unavailable; ready means this node serves every request it accepts
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                            "cluster membership not settled: waiting to hear from every peer\n", keepAlive);
                } else if (!server.authorizer().isReady()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                            "signing keys not loaded or stale\n", keepAlive);
                } else if (server.budget().isFull()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                            "memory budget full\n", keepAlive);
                } else {
                    replies.text(ctx, request, HttpResponseStatus.OK, "text/plain", "ready\n", keepAlive);
                }
            }
            case "/metrics" -> replies.text(ctx, request, HttpResponseStatus.OK,
                    "text/plain; version=0.0.4; charset=utf-8",
                    server.metrics().render(server.budget(), server.isDraining()) + server.authorizer().metricsText(),
                    keepAlive);
            default -> {
                return false;
            }
        }
        return true;
    }
}
