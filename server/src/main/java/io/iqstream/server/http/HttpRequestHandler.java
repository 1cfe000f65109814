package io.iqstream.server.http;

import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.iqstream.server.ServerContext;
import io.iqstream.server.auth.AuthDecision;
import io.iqstream.server.auth.Right;
import io.iqstream.server.auth.TokenExtractor;
import io.iqstream.server.demo.DemoSite;
import io.iqstream.server.ingest.PublishSession;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunIds;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.sse.SubscriberStream;
import io.iqstream.server.worker.ChannelHandoff;
import io.iqstream.server.worker.Worker;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes each request of a connection: operations endpoints answered in place; run requests validated (id,
 * method, token, Last-Event-ID), moved to the run's owner worker, then handed to a {@link PublishSession} or a
 * {@link SubscriberStream}. One instance per connection; it follows the connection from loop to loop.
 */
public final class HttpRequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpRequestHandler.class);
    private static final int MAX_DEMO_BODY_BYTES = 64 * 1024;

    private final ServerContext server;
    private final HttpReplies replies;
    private final Metrics metrics;
    private final ArrayDeque<Object> held = new ArrayDeque<>(4);
    private boolean moving;
    private PublishSession publish;
    private SubscriberStream subscribe;
    private HttpRequest demoRequest;
    private CompositeByteBuf demoBody;

    public HttpRequestHandler(ServerContext server) {
        this.server = server;
        this.replies = server.replies();
        this.metrics = server.metrics();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (moving) {
            held.add(msg);
            return;
        }
        dispatch(ctx, msg);
    }

    private void dispatch(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request) {
            onRequest(ctx, request);
            return;
        }
        if (msg instanceof HttpContent content) {
            if (publish != null) {
                publish.onContent(content);
                if (publish.isFinished()) {
                    publish = null;
                }
            } else if (demoBody != null) {
                onDemoContent(ctx, content);
            } else {
                content.release();
            }
            return;
        }
        ReferenceCountUtil.release(msg);
    }

    private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
        if (subscribe != null && !subscribe.isDone() || publish != null) {
            // a pipelined request while a stream is open: not supported, end the connection
            ctx.close();
            return;
        }
        subscribe = null;
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        if (request.decoderResult().isFailure()) {
            refuse(ctx, request, Refusal.BAD_REQUEST, "bad_request", HttpResponseStatus.BAD_REQUEST,
                    "malformed HTTP request", false);
            return;
        }
        QueryStringDecoder query = new QueryStringDecoder(request.uri());
        String path = query.path();
        HttpMethod method = request.method();
        if (method.equals(HttpMethod.OPTIONS)) {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.NO_CONTENT);
            server.cors().applyPreflight(request, r.headers());
            replies.send(ctx, null, r, keepAlive);
            return;
        }
        switch (path) {
            case "/healthz" -> {
                replies.text(ctx, request, HttpResponseStatus.OK, "text/plain", "ok\n", keepAlive);
                return;
            }
            case "/readyz" -> {
                if (server.isDraining()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain", "draining\n",
                            keepAlive);
                } else if (!server.authorizer().isReady()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                            "signing keys not loaded or stale\n", keepAlive);
                } else if (server.budget().isFull()) {
                    replies.text(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                            "memory budget full\n", keepAlive);
                } else {
                    replies.text(ctx, request, HttpResponseStatus.OK, "text/plain", "ready\n", keepAlive);
                }
                return;
            }
            case "/metrics" -> {
                replies.text(ctx, request, HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8",
                        metrics.render(server.budget(), server.isDraining()) + server.authorizer().metricsText(), keepAlive);
                return;
            }
            default -> { }
        }
        if (path.equals("/demo") || path.startsWith("/demo/")) {
            startDemo(ctx, request);
            return;
        }
        RunRoute route = RunRoute.parse(path);
        if (route == null) {
            refuse(ctx, request, Refusal.NOT_FOUND, "not_found", HttpResponseStatus.NOT_FOUND,
                    "no such endpoint: " + path, keepAlive);
            return;
        }
        if (!RunIds.isValid(route.runId())) {
            refuse(ctx, request, Refusal.BAD_REQUEST, "bad_run_id", HttpResponseStatus.BAD_REQUEST,
                    "run id must be 1-128 characters of [A-Za-z0-9._~:-]", keepAlive);
            return;
        }
        Right right;
        if (route.events() && method.equals(HttpMethod.GET)) {
            right = Right.SUBSCRIBE;
        } else if (route.events() && method.equals(HttpMethod.POST)
                || !route.events() && method.equals(HttpMethod.DELETE)) {
            right = Right.PUBLISH;
        } else if (!route.events() && method.equals(HttpMethod.GET)) {
            right = null;
        } else {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.METHOD_NOT_ALLOWED);
            r.headers().set(HttpHeaderNames.ALLOW, route.events() ? "GET, POST, OPTIONS" : "GET, DELETE, OPTIONS");
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            metrics.refused(Refusal.BAD_REQUEST);
            replies.send(ctx, request, r, false);
            return;
        }
        String token = TokenExtractor.extract(request, query, server.cors().allowsCredentials(request));
        AuthDecision decision = right == null ? server.authorizer().authorizeAny(token, route.runId())
                : server.authorizer().authorize(token, route.runId(), right);
        if (decision == AuthDecision.UNAUTHENTICATED) {
            refuse(ctx, request, Refusal.UNAUTHENTICATED, "unauthenticated", HttpResponseStatus.UNAUTHORIZED,
                    server.authorizer().refusalMessage(token), false);
            return;
        }
        if (decision == AuthDecision.FORBIDDEN) {
            refuse(ctx, request, Refusal.FORBIDDEN, "forbidden", HttpResponseStatus.FORBIDDEN,
                    "the token does not allow " + (right == null ? "access to" : right.name().toLowerCase()
                            + " on") + " run " + route.runId(), false);
            return;
        }
        int lastEventId = 0;
        if (right == Right.SUBSCRIBE) {
            lastEventId = parseLastEventId(request, query);
            if (lastEventId < 0) {
                refuse(ctx, request, Refusal.BAD_REQUEST, "bad_last_event_id", HttpResponseStatus.BAD_REQUEST,
                        "Last-Event-ID / lastEventId must be a non-negative integer event id", keepAlive);
                return;
            }
        }
        Worker owner = server.workers().ownerOf(route.runId());
        int resumeFrom = lastEventId;
        if (ctx.channel().eventLoop() != owner.loop()) {
            moving = true;
            metrics.channelMoves.increment();
            ChannelHandoff.moveTo(ctx.channel(), owner.loop(), () -> {
                moving = false;
                serveRun(ctx, request, route, owner.registry(), resumeFrom, keepAlive);
                ctx.channel().config().setAutoRead(true);
                replayHeld(ctx);
            });
            return;
        }
        serveRun(ctx, request, route, owner.registry(), resumeFrom, keepAlive);
    }

    private void replayHeld(ChannelHandlerContext ctx) {
        while (!moving && !held.isEmpty()) {
            dispatch(ctx, held.poll());
        }
        if (!moving && publish != null) {
            publish.onReadComplete();
        }
    }

    private void serveRun(ChannelHandlerContext ctx, HttpRequest request, RunRoute route, RunRegistry registry,
            int lastEventId, boolean keepAlive) {
        if (!ctx.channel().isActive()) {
            return;
        }
        HttpMethod method = request.method();
        String runId = route.runId();
        if (route.events() && method.equals(HttpMethod.POST)) {
            publish = PublishSession.open(ctx, request, server, registry, runId, keepAlive);
            return;
        }
        if (route.events()) {
            subscribe = new SubscriberStream(ctx, request, server, registry, runId, lastEventId, keepAlive);
            subscribe.start();
            return;
        }
        Run run = registry.get(runId);
        if (run == null) {
            boolean gone = registry.isGone(runId);
            refuse(ctx, request, gone ? Refusal.GONE : Refusal.NOT_FOUND, gone ? "gone" : "not_found",
                    gone ? HttpResponseStatus.GONE : HttpResponseStatus.NOT_FOUND,
                    gone ? "run " + runId + " has expired" : "no run " + runId, keepAlive);
            return;
        }
        if (method.equals(HttpMethod.DELETE)) {
            registry.drop(run);
            replies.empty(ctx, request, HttpResponseStatus.NO_CONTENT, keepAlive);
            return;
        }
        StringBuilder sb = new StringBuilder(128).append("{\"runId\":");
        Json.quote(sb, runId);
        sb.append(",\"events\":").append(run.lastEventId())
                .append(",\"lastEventId\":").append(run.lastEventId())
                .append(",\"bytes\":").append(run.log().frameBytes())
                .append(",\"ended\":").append(run.isEnded())
                .append(",\"publishing\":").append(run.publisher() != null)
                .append(",\"subscribers\":").append(run.readerCount())
                .append(",\"ageMs\":").append((System.nanoTime() - run.createdNanos()) / 1_000_000)
                .append('}');
        replies.json(ctx, request, HttpResponseStatus.OK, sb.toString(), keepAlive);
    }

    /** The resume point: Last-Event-ID header, else ?lastEventId=, else 0; -1 when malformed. */
    static int parseLastEventId(HttpRequest request, QueryStringDecoder query) {
        String text = request.headers().get("Last-Event-ID");
        if (text == null || text.isBlank()) {
            List<String> q = query.parameters().get("lastEventId");
            text = q == null || q.isEmpty() ? null : q.get(0);
        }
        if (text == null || text.isBlank()) {
            return 0;
        }
        text = text.trim();
        if (text.length() > 10) {
            return -1;
        }
        long v = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v > Integer.MAX_VALUE ? -1 : (int) v;
    }

    private void startDemo(ChannelHandlerContext ctx, HttpRequest request) {
        DemoSite demo = server.demo();
        if (demo == null) {
            refuse(ctx, request, Refusal.NOT_FOUND, "not_found", HttpResponseStatus.NOT_FOUND,
                    "the demo is off (start with --demo, or without a key for dev mode)", HttpUtil.isKeepAlive(request));
            return;
        }
        demoRequest = request;
        demoBody = ctx.alloc().compositeBuffer();
    }

    private void onDemoContent(ChannelHandlerContext ctx, HttpContent content) {
        if (demoBody.readableBytes() + content.content().readableBytes() > MAX_DEMO_BODY_BYTES) {
            content.release();
            demoBody.release();
            demoBody = null;
            refuse(ctx, demoRequest, Refusal.EVENT_TOO_LARGE, "too_large", HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    "demo request body too large", false);
            return;
        }
        demoBody.addComponent(true, content.content());
        if (!(content instanceof LastHttpContent)) {
            return;
        }
        HttpRequest request = demoRequest;
        DefaultFullHttpRequest full = new DefaultFullHttpRequest(request.protocolVersion(), request.method(),
                request.uri(), demoBody, request.headers(), ((LastHttpContent) content).trailingHeaders());
        demoBody = null;
        demoRequest = null;
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        FullHttpResponse response;
        try {
            response = server.demo().handle(full);
        } finally {
            full.release();
        }
        if (response == null) {
            refuse(ctx, request, Refusal.NOT_FOUND, "not_found", HttpResponseStatus.NOT_FOUND,
                    "no such demo page", keepAlive);
        } else {
            replies.send(ctx, request, response, keepAlive);
        }
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, Refusal reason, String code,
            HttpResponseStatus status, String message, boolean keepAlive) {
        metrics.refused(reason);
        if (LOG.isDebugEnabled()) {
            LOG.debug("refused {} {} from {}: {} {} ({})", request.method(), request.uri().replaceAll(
                    "access_token=[^&]*", "access_token=…"), ctx.channel().remoteAddress(), status.code(), code,
                    message);
        }
        replies.error(ctx, request, code, status, message, keepAlive);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (publish != null) {
            publish.onReadComplete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (subscribe != null) {
            subscribe.writabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (publish != null) {
            publish.onClosed();
            publish = null;
        }
        if (subscribe != null) {
            subscribe.closed();
            subscribe = null;
        }
        if (demoBody != null) {
            demoBody.release();
            demoBody = null;
        }
        while (!held.isEmpty()) {
            ReferenceCountUtil.release(held.poll());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
