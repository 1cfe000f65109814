package io.iqstream.server.http;

import io.iqstream.server.BuildInfo;
import io.iqstream.server.ServerContext;
import io.iqstream.server.cluster.Cluster;
import io.iqstream.server.cluster.Membership;
import io.iqstream.server.wire.HttpReplies;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * The operations endpoints: {@code /healthz} (the process answers: {@code ok}, then the version line
 * {@code --version} prints), {@code /readyz} (503 while the start-up's warm-up runs, while draining, with
 * {@code --peers} until the membership has settled, with the signing keys not loaded or stale, or with the memory
 * budget full), {@code /metrics} (Prometheus text). Served on the main port and on the admin port.
 * Stateless; reads only thread-safe state, so it answers on any loop (the admin port's is the acceptor's).
 */
public final class OperationsRoute {
    /** {@code ok}, then what {@code iqstream --version} prints: {@code iqstream 0.1.0 (commit 1917714abcde)}. */
    private static final String HEALTHZ = "ok\n" + BuildInfo.describe() + "\n";

    private OperationsRoute() {}

    /**
     * {@code /readyz}. With {@code --peers} the answer carries this node's ready set ({@link Membership#VIEW_HEADER},
     * read by the peers' probes), and a ready answer says how many peers see another set (still 200: a view that
     * differs for a while does not split runs, and a 503 would only make the views differ more).
     */
    private static void readiness(ServerContext server, ChannelHandlerContext ctx, HttpRequest request,
            boolean keepAlive) {
        Cluster cluster = server.cluster();
        HttpResponseStatus status = HttpResponseStatus.SERVICE_UNAVAILABLE;
        String body;
        if (server.isWarmingUp()) {
            body = "warming up\n";
        } else if (server.isDraining()) {
            body = "draining\n";
        } else if (cluster != null && !cluster.membership().settled()) {
            // --peers: until every peer answered once, a run request here could be answered
            // 503 peer_unavailable; ready means this node serves every request it accepts
            body = "cluster membership not settled: waiting to hear from every peer\n";
        } else if (!server.authorizer().isReady()) {
            body = "signing keys not loaded or stale\n";
        } else if (server.budget().isFull()) {
            body = "memory budget full\n";
        } else {
            status = HttpResponseStatus.OK;
            int differ = cluster == null ? 0 : cluster.membership().disagreeing();
            body = differ == 0 ? "ready\n" : "ready; cluster view differs from " + differ + " peer(s)\n";
        }
        FullHttpResponse response = HttpReplies.response(status, "text/plain", body);
        if (cluster != null) {
            response.headers().set(Membership.VIEW_HEADER, cluster.membership().view().readyKeys());
        }
        server.replies().send(ctx, request, response, keepAlive);
    }

    /** Answers {@code path} if it is an operations endpoint; false (nothing written) otherwise. */
    public static boolean answer(ServerContext server, ChannelHandlerContext ctx, HttpRequest request, String path,
            boolean keepAlive) {
        HttpReplies replies = server.replies();
        switch (path) {
            case "/healthz" -> replies.text(ctx, request, HttpResponseStatus.OK, "text/plain", HEALTHZ, keepAlive);
            case "/readyz" -> readiness(server, ctx, request, keepAlive);
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
