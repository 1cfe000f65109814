package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.auth.Right;
import io.iqstream.server.metrics.Refusal;
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
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * A Durable Streams request ({@code /v1/stream/{path}}) on its stream's owner worker: its body gathered (at most
 * {@code --max-event-bytes}, 413 above), then served by {@link StreamExchange}; a live read then stays with the
 * connection until answered. The checks before the move to the owner (the right a method needs, the preflight)
 * are here too.
 *
 * <p>What a client can make it hold, and what bounds it:
 * <ul>
 *   <li>A body on a read or a delete ({@code GET}, {@code HEAD}, {@code DELETE} whose head announces one: a
 *       {@code Content-Length} above 0 or a chunked body) is never gathered: 400 {@code body_not_allowed} at its
 *       head, and the connection is closed (its bytes are discarded unread).</li>
 *   <li>A body being gathered is charged to the {@link MemoryBudget} as it grows, within the bodies' share
 *       ({@link MemoryBudget#tryChargeBody}); when refused: 503 {@code over_budget}, {@code Retry-After}, closed.
 *       The charge is given back when the request is answered or its connection closes.</li>
 *   <li>The body must end within {@code --body-timeout} of its head ({@link RequestTimeoutHandler#gatherBody}),
 *       else 408 and closed, which releases it here.</li>
 *   <li>An answer written to a client that does not read it: when the connection is not writable after an
 *       answer, nothing more is read from it ({@link ChunkedBodyReader#pause}, autoRead off) until it drains, so
 *       pipelined or reissued reads queue at most one answer beyond the write buffer's high-water mark.</li>
 * </ul>
 *
 * <p>One per request; confined to the owner worker's loop.
 */
final class DurableStreamRoute {
    private final StreamExchange.Settings settings;
    private final MemoryBudget budget;
    private final long maxReaderLagMs;
    private final ChannelHandlerContext ctx;
    /** The request, its target and its body: dropped once it is answered or a live read goes on. */
    private HttpRequest request;
    private RequestTarget target;
    private final boolean keepAlive;
    /** False for a fork whose source the caller may not read: served as if the source did not exist. */
    private final boolean sourceReadable;
    private CompositeByteBuf body;
    private boolean tooLarge;
    /** Bytes of {@link #body} charged to the budget ({@link MemoryBudget#tryChargeBody}); 0 once given back. */
    private long chargedBytes;
    /** The answer still going on: a live read, or a write waiting for the disk; null once answered. */
    private StreamAnswer live;
    private boolean answered;
    /** Reading the connection was turned off after an answer that left it unwritable (back-pressure). */
    private boolean readingPaused;

    private DurableStreamRoute(ServerContext server, ChannelHandlerContext ctx, HttpRequest request,
            RequestTarget target, boolean keepAlive, boolean sourceReadable) {
        this.sourceReadable = sourceReadable;
        this.settings = server.streamSettings();
        this.budget = server.budget();
        this.maxReaderLagMs = server.config().maxSubscriberLagMs();
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
     * Begins serving on the owner worker; body content follows through {@link #onContent}. A read or delete that
     * announces a body is refused here, before any of it is read; any other body's end is awaited within
     * {@code --body-timeout}. {@code sourceReadable}: false when the request forks a stream its caller may not read.
     */
    static DurableStreamRoute begin(ServerContext server, ChannelHandlerContext ctx, HttpRequest request,
            RequestTarget target, boolean keepAlive, boolean sourceReadable) {
        DurableStreamRoute route = new DurableStreamRoute(server, ctx, request, target, keepAlive, sourceReadable);
        boolean announcesBody = HttpUtil.getContentLength(request, 0L) > 0 || HttpUtil.isTransferEncodingChunked(request);
        if (announcesBody && takesNoBody(request.method())) {
            route.refuse(Refusal.BAD_REQUEST, "body_not_allowed", HttpResponseStatus.BAD_REQUEST,
                    request.method() + " of a stream takes no body (send none, or Content-Length: 0)");
        } else if (announcesBody) {
            RequestTimeoutHandler timeouts = ctx.pipeline().get(RequestTimeoutHandler.class);
            if (timeouts != null) {
                timeouts.gatherBody();
            }
        }
        return route;
    }

    /** GET, HEAD and DELETE of a stream: their bodies mean nothing here and are never gathered. */
    private static boolean takesNoBody(HttpMethod method) {
        return method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD) || method.equals(HttpMethod.DELETE);
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
                releaseCharge();
            }
            if (!tooLarge && data.isReadable()) {
                if (!budget.tryChargeBody(data.readableBytes())) {
                    refuse(Refusal.OVER_BUDGET, "over_budget", HttpResponseStatus.SERVICE_UNAVAILABLE,
                            "server memory budget is full: the request body cannot be held now; retry later");
                    return true;
                }
                chargedBytes += data.readableBytes();
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
        // released by serve (an append's bytes are charged to its stream now); a parked live reader holds none; a
        // request on a cold stream holds its body while the stream's file is read, so it stays charged till then
        if (live != null && chargedBytes > 0) {
            long held = chargedBytes;
            chargedBytes = 0;
            live.whenBodyReleased(() -> budget.releaseBody(held));
        } else {
            releaseCharge();
        }
        body = null;
        request = null;
        target = null;
        if (live != null) {
            live.cutAfterLagMs(maxReaderLagMs);
            return false;
        }
        if (!ctx.channel().isWritable() && ctx.channel().isActive()) {
            // the client is not reading its answers: read nothing more (no further request, no further answer)
            // until they drain; what was read already is kept undecoded by the step-down
            readingPaused = true;
            ctx.channel().config().setAutoRead(false);
            ChunkedBodyReader reader = ctx.pipeline().get(ChunkedBodyReader.class);
            if (reader != null) {
                reader.pause();
            }
        }
        return true;
    }

    /**
     * The connection's writability changed: a live SSE read goes on writing or stops; a connection whose reading
     * was paused after an answer reads again once it drains.
     */
    void writabilityChanged() {
        if (live != null && !live.isDone()) {
            live.writabilityChanged();
            return;
        }
        if (readingPaused && ctx.channel().isWritable()) {
            readingPaused = false;
            ctx.channel().config().setAutoRead(true);
            ChunkedBodyReader reader = ctx.pipeline().get(ChunkedBodyReader.class);
            if (reader != null) {
                reader.resume();
            }
        }
    }

    /** Refuses the request at once (nothing more of its body is gathered) and closes the connection after it. */
    private void refuse(Refusal reason, String code, HttpResponseStatus status, String message) {
        answered = true;
        if (!tooLarge) {
            tooLarge = true; // nothing more is gathered
            body.release();
        }
        releaseCharge();
        settings.metrics().refused(reason);
        HttpRequest r = request;
        request = null;
        target = null;
        settings.replies().error(ctx, r, code, status, message, false);
    }

    private void releaseCharge() {
        if (chargedBytes > 0) {
            budget.releaseBody(chargedBytes);
            chargedBytes = 0;
        }
    }

    /** Whether the answer waits for its write to be durable (a pipelined request is then held, not refused). */
    boolean awaitsStorage() {
        return answered && live != null && live.awaitsStorage();
    }

    /** Calls {@code then} once the answer that {@link #awaitsStorage} is written, with whether it kept alive. */
    void whenDone(java.util.function.Consumer<Boolean> then) {
        live.whenDone(then);
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
        releaseCharge();
        if (live != null) {
            live.closed();
        }
    }
}
