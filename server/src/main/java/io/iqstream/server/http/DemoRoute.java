package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.demo.DemoSite;
import io.iqstream.server.metrics.Refusal;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.CompletableFuture;

/**
 * One request to the demo site ({@code /demo...}): its body gathered (at most {@value #MAX_BODY_BYTES} bytes,
 * else 413 and closed), then handed whole to the {@link DemoSite}, whose answer to a run start comes once the run
 * is created (a round trip to the relay's own publish API). Confined to the connection's loop.
 */
final class DemoRoute {
    static final int MAX_BODY_BYTES = 64 * 1024;

    private final ServerContext server;
    private final ChannelHandlerContext ctx;
    private final HttpRequest request;
    private CompositeByteBuf body;

    private DemoRoute(ServerContext server, ChannelHandlerContext ctx, HttpRequest request) {
        this.server = server;
        this.ctx = ctx;
        this.request = request;
        this.body = ctx.alloc().compositeBuffer();
    }

    static boolean serves(String path) {
        return path.equals("/demo") || path.startsWith("/demo/");
    }

    /** Starts gathering the request; null after answering 404 when the demo is off. */
    static DemoRoute start(ServerContext server, ChannelHandlerContext ctx, HttpRequest request) {
        if (server.demo() == null) {
            server.metrics().refused(Refusal.NOT_FOUND);
            server.replies().error(ctx, request, "not_found", HttpResponseStatus.NOT_FOUND,
                    "the demo is off (start with --demo, or without a key for dev mode)", HttpUtil.isKeepAlive(request));
            return null;
        }
        return new DemoRoute(server, ctx, request);
    }

    /** A chunk of the body (ownership taken); true once the request is answered. */
    boolean onContent(HttpContent content) {
        if (body.readableBytes() + content.content().readableBytes() > MAX_BODY_BYTES) {
            content.release();
            release();
            server.metrics().refused(Refusal.EVENT_TOO_LARGE);
            server.replies().error(ctx, request, "too_large", HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    "demo request body too large", false);
            return true;
        }
        body.addComponent(true, content.content());
        if (!(content instanceof LastHttpContent last)) {
            return false;
        }
        FullHttpRequest full = new DefaultFullHttpRequest(request.protocolVersion(), request.method(),
                request.uri(), body, request.headers(), last.trailingHeaders());
        body = null;
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        CompletableFuture<FullHttpResponse> answer;
        try {
            answer = server.demo().handle(full);
        } finally {
            full.release();
        }
        if (answer == null) {
            server.metrics().refused(Refusal.NOT_FOUND);
            server.replies().error(ctx, request, "not_found", HttpResponseStatus.NOT_FOUND, "no such demo page",
                    keepAlive);
            return true;
        }
        FullHttpResponse ready = answer.getNow(null);
        if (ready != null) {
            server.replies().send(ctx, request, ready, keepAlive);
            return true;
        }
        // a start is answered once its run exists (or was refused): back on this connection's loop; a connection
        // closed meanwhile makes the write fail, and Netty releases the response
        EventLoop loop = ctx.channel().eventLoop();
        answer.whenComplete((response, failure) -> loop.execute(() -> {
            if (response != null) {
                server.replies().send(ctx, request, response, keepAlive);
            } else {
                server.metrics().refused(Refusal.INTERNAL_ERROR);
                server.replies().error(ctx, request, "internal_error", HttpResponseStatus.INTERNAL_SERVER_ERROR,
                        "the demo failed to start a run", false);
            }
        }));
        return true;
    }

    /** Frees the gathered body (connection closed or request failed). */
    void release() {
        if (body != null) {
            body.release();
            body = null;
        }
    }
}
