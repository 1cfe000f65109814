package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.auth.Right;
import io.iqstream.server.stream.DurableStreamProtocol;
import io.iqstream.server.stream.StreamAnswer;
import io.iqstream.server.stream.StreamExchange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * A Durable Streams request ({@code /v1/stream/{path}}) on its stream's owner worker: its body gathered (at most
 * {@code --max-event-bytes}, 413 above), then served by {@link StreamExchange}; a live read then stays with the
 * connection until answered. The checks before the move to the owner (the right a method needs, the preflight)
 * are here too.
 *
 * <p>One per request; confined to the owner worker's loop.
 */
final class DurableStreamRoute {
    private final StreamExchange.Settings settings;
    private final ChannelHandlerContext ctx;
    /** The request, its target and its body: dropped once it is answered or a live read goes on. */
    private HttpRequest request;
    private RequestTarget target;
    private final boolean keepAlive;
    /** False for a fork whose source the caller may not read: served as if the source did not exist. */
    private final boolean sourceReadable;
    private CompositeByteBuf body;
    private boolean tooLarge;
    /** The answer still going on: a live read, or a write waiting for the disk; null once answered. */
    private StreamAnswer live;
    private boolean answered;

    private DurableStreamRoute(StreamExchange.Settings settings, ChannelHandlerContext ctx, HttpRequest request,
            RequestTarget target, boolean keepAlive, boolean sourceReadable) {
        this.settings = settings;
        this.sourceReadable = sourceReadable;
        this.ctx = ctx;
        this.request = request;
        this.target = target;
        this.keepAlive = keepAlive;
        this.body = ctx.alloc().compositeBuffer(64);
    }

    /** Whether {@code path} (decoded) is a Durable Streams request. */
    static boolean serves(String path) {
        return path.startsWith(DurableStreamProtocol.PATH_PREFIX)
                && path.length() > DurableStreamProtocol.PATH_PREFIX.length();
    }

    /** The stream's name in tokens' patterns: its path after {@code /v1/stream/}. */
    static String streamName(String path) {
        return path.substring(DurableStreamProtocol.PATH_PREFIX.length());
    }

    /** The right a method needs: subscribe to read (GET, HEAD), publish to write (PUT, POST, DELETE); else null. */
    static Right rightFor(HttpMethod method) {
        if (method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD)) {
            return Right.SUBSCRIBE;
        }
        if (method.equals(HttpMethod.PUT) || method.equals(HttpMethod.POST) || method.equals(HttpMethod.DELETE)) {
            return Right.PUBLISH;
        }
        return null;
    }

    /** Answers a CORS preflight for a stream: any origin with --durable-streams-open, else --cors-origin's. */
    static void preflight(ServerContext server, ChannelHandlerContext ctx, HttpRequest request, boolean keepAlive) {
        FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(), HttpResponseStatus.NO_CONTENT);
        boolean open = server.config().durableStreamsOpen();
        if (open || server.cors().allowedOrigin(request) != null) {
            if (open) {
                r.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");
            } else {
                server.cors().apply(request, r.headers());
            }
            r.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, DurableStreamProtocol.CORS_METHODS);
            r.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, DurableStreamProtocol.CORS_ALLOW_HEADERS);
            r.headers().set(HttpHeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, DurableStreamProtocol.CORS_EXPOSE_HEADERS);
            r.headers().set(HttpHeaderNames.ACCESS_CONTROL_MAX_AGE, "600");
        }
        DurableStreamProtocol.securityHeaders(r.headers());
        server.replies().send(ctx, null, r, keepAlive);
    }

    /**
     * Begins serving on the owner worker; body content follows through {@link #onContent}. {@code sourceReadable}:
     * false when the request forks a stream its caller may not read.
     */
    static DurableStreamRoute begin(StreamExchange.Settings settings, ChannelHandlerContext ctx, HttpRequest request,
            RequestTarget target, boolean keepAlive, boolean sourceReadable) {
        return new DurableStreamRoute(settings, ctx, request, target, keepAlive, sourceReadable);
    }

    /** A body chunk; returns true once the request is answered and no live read goes on (the route is done). */
    boolean onContent(HttpContent content) {
        try {
            if (answered) {
                return live == null || live.isDone();
            }
            ByteBuf data = content.content();
            if (!tooLarge && body.readableBytes() + data.readableBytes() > settings.maxAppendBytes()) {
                tooLarge = true;
                body.release();
            }
            if (!tooLarge && data.isReadable()) {
                body.addComponent(true, data.retain());
            }
        } finally {
            content.release();
        }
        if (!(content instanceof LastHttpContent)) {
            return false;
        }
        answered = true;
        if (tooLarge) {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE);
            DurableStreamProtocol.securityHeaders(r.headers());
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            r.headers().set(HttpHeaderNames.CONNECTION, "close");
            ctx.writeAndFlush(r).addListener(f -> ctx.close());
            return true;
        }
        live = StreamExchange.serve(settings, ctx, request, target.path(), body, target.parameters("offset"),
                target.parameter("live"), target.parameter("cursor"), keepAlive, sourceReadable);
        // released by serve; a parked live reader holds none of them
        body = null;
        request = null;
        target = null;
        return live == null;
    }

    /** Whether a later request may be read on this connection. */
    boolean isDone() {
        return answered && (live == null || live.isDone());
    }

    /** The connection closed. */
    void closed() {
        if (!answered) {
            answered = true;
            if (!tooLarge) {
                body.release();
            }
        }
        if (live != null) {
            live.closed();
        }
    }
}
