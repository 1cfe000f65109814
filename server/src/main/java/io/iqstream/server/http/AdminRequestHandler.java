package io.iqstream.server.http;

import io.iqstream.server.log.Redaction;
import io.iqstream.server.ServerContext;
import io.iqstream.server.metrics.Refusal;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin port's only route: {@link OperationsRoute} ({@code /healthz}, {@code /readyz}, {@code /metrics});
 * 404 for everything else; 400 and closed for anything the decoder could not read; bodies discarded. One per
 * connection, confined to the admin loop (the acceptor's, so a saturated worker never delays a health check).
 */
public final class AdminRequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(AdminRequestHandler.class);

    private final ServerContext server;

    public AdminRequestHandler(ServerContext server) {
        this.server = server;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpObject object && object.decoderResult().isFailure()) {
                server.metrics().refused(Refusal.BAD_REQUEST);
                server.replies().error(ctx, null, "bad_request", HttpResponseStatus.BAD_REQUEST,
                        "malformed HTTP request", false);
                return;
            }
            if (!(msg instanceof HttpRequest request)) {
                return;
            }
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            RequestTarget target = RequestTarget.parse(request.uri());
            if (target == null) {
                server.metrics().refused(Refusal.BAD_REQUEST);
                server.replies().error(ctx, request, "bad_request", HttpResponseStatus.BAD_REQUEST,
                        "malformed request target", false);
                return;
            }
            if (!OperationsRoute.answer(server, ctx, request, target.path(), keepAlive)) {
                server.metrics().refused(Refusal.NOT_FOUND);
                server.replies().error(ctx, request, "not_found", HttpResponseStatus.NOT_FOUND,
                        "the admin port serves only /healthz, /readyz and /metrics", keepAlive);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!(cause instanceof IOException)) {
            LOG.warn("admin request on {} failed", ctx.channel().remoteAddress(), Redaction.of(cause));
            server.replies().error(ctx, null, "internal_error", HttpResponseStatus.INTERNAL_SERVER_ERROR,
                    "internal error; the connection is closed", false);
            return;
        }
        ctx.close();
    }
}
