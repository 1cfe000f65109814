package io.iqstream.server.http;

import io.iqstream.server.ServerContext;
import io.iqstream.server.auth.AuthDecision;
import io.iqstream.server.auth.Right;
import io.iqstream.server.auth.TokenExtractor;
import io.iqstream.server.cluster.Cluster;
import io.iqstream.server.cluster.Forwarder;
import io.iqstream.server.cluster.PeerAuth;
import io.iqstream.server.cluster.PeerProofHandler;
import io.iqstream.server.cluster.Relay;
import io.iqstream.server.ingest.PublishSession;
import io.iqstream.server.log.Redaction;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.RunIds;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.sse.SubscriberStream;
import io.iqstream.server.stream.DurableStreamProtocol;
import io.iqstream.server.stream.DurableStreams;
import io.iqstream.server.wire.HttpReplies;
import io.iqstream.server.wire.LastEventId;
import io.iqstream.server.wire.WaitingReader;
import io.iqstream.server.worker.Worker;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes each request of a connection, and nothing else: a message the decoder could not read is answered 400
 * and the connection closed; operations endpoints go to {@link OperationsRoute}, {@code /demo} to
 * {@link DemoRoute}, {@code /v1/threads/} to {@link ThreadRunsRoute}; run requests are validated (target encoding, run id, method, token, Last-Event-ID), moved to
 * the run's owner worker, then handed to a {@link PublishSession}, a {@link SubscriberStream} or
 * {@link RunStatusHandler}. Any exception while serving answers 500 {@code internal_error} and closes. What is read
 * while a request cannot be served yet, the move to the owner worker included, is {@link AnswerOrder}'s: answers
 * leave in request order.
 *
 * <p>One instance per connection; it follows the connection from loop to loop and is confined to its current one.
 */
public final class HttpRequestHandler extends ChannelInboundHandlerAdapter
        implements ChunkedBodyReader.Sink, WaitingReader {
    private static final Logger LOG = LoggerFactory.getLogger(HttpRequestHandler.class);

    /** Test hook: runs with the run id on the run's owner loop (after any hand-off) before the request is served. */
    static volatile Consumer<String> beforeServeProbe;

    private final ServerContext server;
    private final RequestTimeoutHandler timeouts;
    /** Package-private: {@link AnswerOrder} reads it (through the handler, so it holds no copy per connection). */
    final ChunkedBodyReader body;
    private final HttpReplies replies;
    final Metrics metrics;
    /** A live reader waits on this connection ({@link #readerWaiting}); its request path is out while it does. */
    private boolean readerWaits;
    private boolean requestPathDropped;
    /** What is read while the request before it cannot be served yet, and the hand-off; made with the context. */
    private AnswerOrder order;
    private boolean failed;
    /** The connection's I/O failure was logged (at debug): once per connection, not once per queued write. */
    private boolean failureLogged;
    private PublishSession publish;
    private SubscriberStream subscribe;
    private DemoRoute demo;
    /** A Durable Streams request ({@code /v1/stream/}) being served, a live read included. */
    private DurableStreamRoute stream;
    /** A run request served by another node (--peers): its body goes there, its answer comes back. */
    private Relay relay;
    /**
     * The request's body end went to a relay that then gave the request back (a stream's holder that could not be
     * reached or no longer holds it, and the lookup again found it served here): its route gets an empty end.
     */
    private boolean relayedEnd;
    /** The request being served carried a verified peer header: served here, never relayed. */
    private boolean fromPeer;

    ChannelHandlerContext ctx;

    /**
     * @param timeouts the connection's timers, which also know when the request now served began to arrive
     * @param body the connection's step-down, told when a streaming publish body is to be read there
     */
    public HttpRequestHandler(ServerContext server, RequestTimeoutHandler timeouts, ChunkedBodyReader body) {
        this.server = server;
        this.timeouts = timeouts;
        this.body = body;
        this.replies = server.replies();
        this.metrics = server.metrics();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        this.ctx = context;
        this.order = new AnswerOrder(this);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (order.isWaiting()) {
            order.hold(msg);
            return;
        }
        dispatch(ctx, msg);
    }

    /** A stepped-down body's data, straight from {@link ChunkedBodyReader}: held while moving, as any message. */
    @Override
    public void bodyData(ByteBuf data) {
        channelRead(ctx, data);
    }

    @Override
    public void bodyReadComplete() {
        if (!order.isWaiting()) {
            channelReadComplete(ctx);
        }
    }

    void dispatch(ChannelHandlerContext ctx, Object msg) {
        if (failed) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpObject object && object.decoderResult().isFailure()) {
            Throwable cause = object.decoderResult().cause();
            ReferenceCountUtil.release(msg);
            badRequest(ctx, "malformed HTTP " + (msg instanceof HttpRequest ? "request" : "body") + ": "
                    + (cause == null ? "undecodable" : cause.getMessage()));
            return;
        }
        if (msg instanceof HttpRequest request) {
            onRequest(ctx, request);
            return;
        }
        if (msg instanceof ByteBuf data) {
            // a stepped-down body's data (ChunkedBodyReader): a publish's, or a relayed one's
            if (publish != null) {
                publish.onBody(data);
                if (publish.isFinished()) {
                    publish = null;
                }
            } else if (relay != null) {
                relay.onContent(new DefaultHttpContent(data));
            } else {
                data.release();
                if (requestPathDropped) {
                    // a request pipelined behind a live read: not served (as with the decoder in place), closed
                    ctx.close();
                }
            }
            return;
        }
        if (msg instanceof HttpContent content) {
            if (body.isSteppedDown()) {
                content.release();
                throw new IllegalStateException("the codec decoded body content of a stepped-down request");
            }
            if (publish != null) {
                publish.onContent(content);
                if (publish.isFinished()) {
                    publish = null;
                }
            } else if (demo != null) {
                if (demo.onContent(content)) {
                    demo = null;
                }
            } else if (stream != null) {
                stream.onContent(content);
            } else if (relay != null) {
                relayedEnd |= content instanceof LastHttpContent;
                relay.onContent(content);
            } else {
                content.release();
            }
            return;
        }
        ReferenceCountUtil.release(msg);
    }

    /**
     * A request or body the decoder failed on (bad chunk size, bad header, line too long): whatever was being
     * served ends (a publisher is lost at the events already appended), 400, closed. Nothing after it is read.
     */
    private void badRequest(ChannelHandlerContext ctx, String message) {
        failed = true;
        endRoutes();
        if (subscribe != null && subscribe.isStreaming()) {
            ctx.close();
            return;
        }
        metrics.refused(Refusal.BAD_REQUEST);
        replies.error(ctx, null, "bad_request", HttpResponseStatus.BAD_REQUEST, message, false);
    }

    private void onRequest(ChannelHandlerContext ctx, HttpRequest request) {
        if (relay != null && !relay.isDone()) {
            // a request pipelined behind one relayed to another node: it waits until that answer is whole
            order.hold(request);
            order.awaitAnswer();
            relay.whenDone(this::answered);
            return;
        }
        if (stream != null && stream.awaitsStorage()) {
            // a request pipelined behind a write whose answer waits for the disk: it waits until that answer is out
            order.hold(request);
            order.awaitAnswer();
            stream.whenDone(this::answered);
            return;
        }
        if (subscribe != null && !subscribe.isDone() || publish != null || demo != null
                || stream != null && !stream.isDone()) {
            // a pipelined request while a stream is open: not supported, end the connection
            ctx.close();
            return;
        }
        subscribe = null;
        relay = null;
        relayedEnd = false;
        stream = null;
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        RequestTarget target = RequestTarget.parse(request.uri());
        if (target == null) {
            failed = true;
            refuse(ctx, request, Refusal.BAD_REQUEST, "bad_request", HttpResponseStatus.BAD_REQUEST,
                    "malformed request target (bad percent-encoding or a character outside printable ASCII)",
                    false);
            return;
        }
        if (RequestFraming.hasOtherCoding(request)) {
            failed = true;
            refuse(ctx, request, Refusal.BAD_REQUEST, "unsupported_transfer_coding", HttpResponseStatus.NOT_IMPLEMENTED,
                    "only Transfer-Encoding: chunked is understood here (RFC 9112 6.1: no other transfer coding)",
                    false);
            return;
        }
        fromPeer = false;
        Cluster cluster = server.cluster();
        if (cluster != null && request.headers().contains(PeerAuth.HEADER)) {
            fromPeer = cluster.verifyPeer(request, ctx.pipeline().get(PeerProofHandler.class)) != null;
            if (!fromPeer) {
                refuse(ctx, request, Refusal.PEER_UNPROVEN, "peer_unproven", HttpResponseStatus.FORBIDDEN,
                        PeerAuth.HEADER + " does not verify on this node (another --cluster-secret, a clock more "
                                + "than 30 s off, a replay, or meant for another node): not served, not relayed",
                        false);
                return;
            }
        }
        HttpMethod method = request.method();
        if (DurableStreamRoute.serves(target.path()) && server.durableStreams() != null) {
            serveStream(ctx, request, target, keepAlive);
            return;
        }
        if (method.equals(HttpMethod.OPTIONS)) {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.NO_CONTENT);
            server.cors().applyPreflight(request, r.headers());
            replies.send(ctx, null, r, keepAlive);
            return;
        }
        if (OperationsRoute.answer(server, ctx, request, target.path(), keepAlive)) {
            return;
        }
        if (DemoRoute.serves(target.path())) {
            demo = DemoRoute.start(server, ctx, request);
            return;
        }
        if (ThreadRunsRoute.serves(target.rawPath())) {
            if (ThreadRunsRoute.serve(server, ctx, request, target, fromPeer, keepAlive, this::answered)) {
                order.awaitAnswer();
            }
            return;
        }
        RunRoute route = RunRoute.parse(target.rawPath());
        if (route == null) {
            refuse(ctx, request, Refusal.NOT_FOUND, "not_found", HttpResponseStatus.NOT_FOUND,
                    "no such endpoint: " + target.path(), keepAlive);
            return;
        }
        if (!RunIds.isValid(route.runId())) {
            refuse(ctx, request, Refusal.BAD_REQUEST, "bad_run_id", HttpResponseStatus.BAD_REQUEST,
                    "run id must be 1-128 characters of [A-Za-z0-9._~:-]", keepAlive);
            return;
        }
        Right right = rightFor(route, method);
        if (right == null && !(method.equals(HttpMethod.GET) && !route.events())) {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.METHOD_NOT_ALLOWED);
            r.headers().set(HttpHeaderNames.ALLOW, route.events() ? "GET, POST, OPTIONS" : "GET, DELETE, OPTIONS");
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            metrics.refused(Refusal.BAD_REQUEST);
            replies.send(ctx, request, r, false);
            return;
        }
        String token = TokenExtractor.extract(request, target.parameters(TokenExtractor.QUERY_PARAMETER),
                server.cors().allowsCredentials(request));
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
        long lastEventId = 0;
        if (right == Right.SUBSCRIBE) {
            lastEventId = LastEventId.of(request, target.parameter(LastEventId.QUERY_PARAMETER));
            if (lastEventId == LastEventId.MALFORMED) {
                refuse(ctx, request, Refusal.BAD_REQUEST, "bad_last_event_id", HttpResponseStatus.BAD_REQUEST,
                        "Last-Event-ID / lastEventId must be an integer event id from 0 to " + LastEventId.MAX,
                        keepAlive);
                return;
            }
        }
        if (right == Right.PUBLISH && route.events() && RequestFraming.isPlainChunked(request)) {
            // a streaming publish: its body's data chunks are read below the codec from the next byte on
            body.stepDown(this);
        }
        Worker owner = server.workers().ownerOf(route.runId());
        long resumeAfter = lastEventId;
        if (ctx.channel().eventLoop() != owner.loop()) {
            body.pause();
            order.moveTo(owner.loop(),
                    () -> serveRun(ctx, request, target, route, owner.registry(), resumeAfter, keepAlive),
                    this::closedWhileMoving);
            return;
        }
        serveRun(ctx, request, target, route, owner.registry(), resumeAfter, keepAlive);
    }

    /**
     * A Durable Streams request: its right checked (unless --durable-streams-open), then moved to the stream's
     * owner worker, where {@link DurableStreamRoute} gathers its body and serves it.
     */
    private void serveStream(ChannelHandlerContext ctx, HttpRequest request, RequestTarget target,
            boolean keepAlive) {
        HttpMethod method = request.method();
        if (method.equals(HttpMethod.OPTIONS)) {
            DurableStreamRoute.preflight(server, ctx, request, keepAlive);
            return;
        }
        Right right = DurableStreamRoute.rightFor(method);
        if (right == null) {
            FullHttpResponse r = new DefaultFullHttpResponse(request.protocolVersion(),
                    HttpResponseStatus.METHOD_NOT_ALLOWED);
            r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD, PUT, POST, DELETE, OPTIONS");
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            metrics.refused(Refusal.BAD_REQUEST);
            replies.send(ctx, request, r, false);
            return;
        }
        Cluster cluster = server.cluster();
        if (fromPeer && Forwarder.isLocate(request)) {
            // a peer's "do you hold it?": the asking node checked the client's token (Forwarder.answerLocate)
            cluster.forwarder().answerLocate(ctx, request, server.durableStreams().holds(target.path()), keepAlive);
            return;
        }
        String name = DurableStreamRoute.streamName(target.path());
        String forkSource = method.equals(HttpMethod.PUT)
                ? request.headers().get(DurableStreamProtocol.FORKED_FROM) : null;
        boolean sourceReadable = true;
        if (!server.config().durableStreamsOpen()) {
            String token = TokenExtractor.extract(request, target.parameters(TokenExtractor.QUERY_PARAMETER),
                    server.cors().allowsCredentials(request));
            AuthDecision decision = server.authorizer().authorize(token, name, right);
            if (decision == AuthDecision.UNAUTHENTICATED) {
                refuse(ctx, request, Refusal.UNAUTHENTICATED, "unauthenticated", HttpResponseStatus.UNAUTHORIZED,
                        server.authorizer().refusalMessage(token), false);
                return;
            }
            if (decision == AuthDecision.FORBIDDEN) {
                refuse(ctx, request, Refusal.FORBIDDEN, "forbidden", HttpResponseStatus.FORBIDDEN,
                        "the token does not allow " + right.name().toLowerCase() + " on stream " + name, false);
                return;
            }
            // a fork reads its source: it needs subscribe there too, checked here and again on the node that holds
            // the source (a relayed request is checked anew); refused, the source is answered as absent (404)
            sourceReadable = forkSource == null || DurableStreamRoute.serves(forkSource) && server.authorizer()
                    .authorize(token, DurableStreamRoute.streamName(forkSource), Right.SUBSCRIBE)
                    == AuthDecision.ALLOWED;
        }
        if (method.equals(HttpMethod.PUT) && server.isDraining()) {
            refuse(ctx, request, Refusal.DRAINING, "draining", HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "server is draining: no new streams", false);
            return;
        }
        boolean readable = sourceReadable;
        if (cluster != null) {
            // --peers: the stream may be held by another node (found there after a membership change)
            String path = target.path();
            DurableStreams streams = server.durableStreams();
            Relay r = cluster.forwarder().routeStream(ctx, request, path, target.rawPath(),
                    readable ? forkSource : null, streams::holds, keepAlive, fromPeer, afterLookup(() -> {
                        relay = null;
                        if (relayedEnd) {
                            order.holdFirst(LastHttpContent.EMPTY_LAST_CONTENT); // the (empty) body's end
                        }
                        serveStreamHere(ctx, request, target, keepAlive, readable);
                    }));
            if (routed(r)) {
                return;
            }
        }
        serveStreamHere(ctx, request, target, keepAlive, readable);
    }

    /**
     * A Durable Streams request served on this node: the connection moves to the stream's worker.
     * {@code sourceReadable}: false for a fork whose source the caller may not read.
     */
    private void serveStreamHere(ChannelHandlerContext ctx, HttpRequest request, RequestTarget target,
            boolean keepAlive, boolean sourceReadable) {
        EventLoop owner = server.durableStreams().ownerOf(target.path());
        if (ctx.channel().eventLoop() != owner) {
            order.moveTo(owner,
                    () -> stream = DurableStreamRoute.begin(server, ctx, request, target, keepAlive, sourceReadable),
                    this::closedWhileMoving);
            return;
        }
        stream = DurableStreamRoute.begin(server, ctx, request, target, keepAlive, sourceReadable);
    }

    /**
     * The connection closed between loops (ChannelHandoff): it gets no channelInactive, so what it holds — body
     * chunks read during the move — is released here.
     */
    private void closedWhileMoving() {
        failed = true;
        endRoutes();
        order.release();
        body.discard();
    }

    /**
     * The answer awaited ({@link AnswerOrder#awaitAnswer}: a thread listing, a lookup at peers, a relayed or stored
     * answer) is written, on the connection's loop: what was held goes on, unless that answer closed the connection.
     */
    private void answered(Boolean keptAlive) {
        if (!order.isWaiting() || failed) {
            return;
        }
        if (!order.answered(keptAlive)) {
            failed = true;
        }
    }

    /** Every held message is served and nothing waits: the route reading a body gets its read-complete. */
    void caughtUp() {
        if (publish != null) {
            publish.onReadComplete();
        }
        if (!order.isWaiting() && relay != null) {
            relay.onReadComplete();
        }
    }

    @Override
    public void readerWaiting() {
        if (readerWaits) {
            return;
        }
        readerWaits = true;
        // not now: this may be inside the codec's own call (a request's head or end being decoded)
        ctx.executor().execute(this::dropRequestPath);
    }

    private void dropRequestPath() {
        if (readerWaits && !requestPathDropped && ctx.channel().isActive() && !ctx.isRemoved()) {
            IqStreamInitializer.dropRequestPath(ctx.pipeline());
            requestPathDropped = true;
            metrics.idleReaderConnections.increment();
        }
    }

    @Override
    public void readerDone() {
        readerWaits = false;
        if (requestPathDropped) {
            requestPathDropped = false;
            metrics.idleReaderConnections.decrement();
            if (ctx.channel().isActive()) {
                IqStreamInitializer.restoreRequestPath(ctx.pipeline(), timeouts);
            }
        }
    }

    @Override
    public ChannelHandlerContext belowCodec() {
        return ctx.pipeline().context(body);
    }

    /** The right a run request needs; null for reading a run's status (any right) or a method not allowed. */
    private static Right rightFor(RunRoute route, HttpMethod method) {
        if (route.events() && method.equals(HttpMethod.GET)) {
            return Right.SUBSCRIBE;
        }
        if (route.events() && method.equals(HttpMethod.POST) || !route.events() && method.equals(HttpMethod.DELETE)) {
            return Right.PUBLISH;
        }
        return null;
    }

    private void serveRun(ChannelHandlerContext ctx, HttpRequest request, RequestTarget target, RunRoute route,
            RunRegistry registry, long lastEventId, boolean keepAlive) {
        if (!ctx.channel().isActive()) {
            return;
        }
        HttpMethod method = request.method();
        String runId = route.runId();
        Consumer<String> probe = beforeServeProbe;
        if (probe != null) {
            probe.accept(runId);
        }
        Cluster cluster = server.cluster();
        if (cluster != null) {
            // --peers: the run may be held by another node; the request is then relayed there
            Relay r = cluster.forwarder().route(ctx, request, runId, registry, keepAlive, fromPeer,
                    afterLookup(() -> serveHere(ctx, request, target, route, registry, lastEventId, keepAlive)));
            if (routed(r)) {
                return;
            }
        }
        serveHere(ctx, request, target, route, registry, lastEventId, keepAlive);
    }

    /**
     * The first answer of {@link Forwarder#route} or {@link Forwarder#routeStream}: true when the request is not served
     * here now — relayed, answered, or waiting for a lookup at peers (nothing after it is served until then).
     */
    private boolean routed(Relay r) {
        if (r == Relay.PENDING) {
            order.awaitAnswer();
            return true;
        }
        if (r != null) {
            relay = r;
            return true;
        }
        return false;
    }

    /**
     * What a lookup at peers decided, on this loop: {@code serveHere} (which may move the connection to another
     * worker, whose arrival replays what is held) or the relay; then what was held behind the request goes on.
     */
    private Consumer<Relay> afterLookup(Runnable serveHere) {
        return later -> {
            order.stopWaiting();
            if (later == null) {
                serveHere.run();
                if (order.isWaiting()) {
                    return;
                }
            } else {
                relay = later;
            }
            order.goOn();
        };
    }

    private void serveHere(ChannelHandlerContext ctx, HttpRequest request, RequestTarget target, RunRoute route,
            RunRegistry registry, long lastEventId, boolean keepAlive) {
        HttpMethod method = request.method();
        String runId = route.runId();
        if (route.events() && method.equals(HttpMethod.POST)) {
            publish = PublishSession.open(ctx, request, server, registry, runId, keepAlive);
            if (publish != null) {
                body.readOnDemand(); // a stepped-down body asks for its reads itself: no pipeline walk per read
            }
        } else if (route.events()) {
            String live = target.parameter("live");
            String ifRunning = target.parameter("ifRunning");
            if (!isBoolean(live) || !isBoolean(ifRunning)) {
                refuse(ctx, request, Refusal.BAD_REQUEST, "bad_request", HttpResponseStatus.BAD_REQUEST,
                        (isBoolean(live) ? "ifRunning" : "live") + " must be true or false", keepAlive);
                return;
            }
            subscribe = new SubscriberStream(ctx, request, server, registry, runId, lastEventId, keepAlive);
            if ("false".equals(live)) {
                subscribe.endAtTail();
            }
            if ("true".equals(ifRunning)) {
                subscribe.onlyIfRunning();
            }
            subscribe.start();
            if (lastEventId > 0 && subscribe.hasBegun()) {
                metrics.resumeLatency(System.nanoTime() - timeouts.headStartNanos());
                long waited = timeouts.acceptToHeadNanos();
                if (waited >= 0) {
                    metrics.resumeAcceptToHead(waited);
                }
            }
        } else {
            RunStatusHandler.serve(server, ctx, request, registry, runId, keepAlive);
        }
    }

    /** An optional boolean query parameter: absent, {@code true} or {@code false}. */
    private static boolean isBoolean(String value) {
        return value == null || value.equals("true") || value.equals("false");
    }

    private void refuse(ChannelHandlerContext ctx, HttpRequest request, Refusal reason, String code,
            HttpResponseStatus status, String message, boolean keepAlive) {
        metrics.refused(reason);
        if (LOG.isDebugEnabled()) {
            LOG.debug("refused {} {} from {}: {} {} ({})", request.method(), Redaction.of(request.uri()),
                    ctx.channel().remoteAddress(), status.code(), code, Redaction.of(message));
        }
        replies.error(ctx, request, code, status, message, keepAlive);
    }

    /** Ends the publish and demo request in progress, if any (the connection is failing or closed). */
    private void endRoutes() {
        if (publish != null) {
            publish.onClosed();
            publish = null;
        }
        if (demo != null) {
            demo.release();
            demo = null;
        }
        if (relay != null) {
            relay.clientClosed();
            relay = null;
        }
        if (stream != null) {
            stream.closed();
            stream = null;
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (publish != null) {
            publish.onReadComplete();
        } else if (relay != null) {
            relay.onReadComplete();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (subscribe != null) {
            subscribe.writabilityChanged();
        } else if (relay != null) {
            relay.writabilityChanged();
        } else if (stream != null) {
            stream.writabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        readerWaits = false;
        if (requestPathDropped) {
            requestPathDropped = false;
            metrics.idleReaderConnections.decrement();
        }
        endRoutes();
        if (subscribe != null) {
            subscribe.closed();
            subscribe = null;
        }
        order.release();
        ctx.fireChannelInactive();
    }

    /**
     * A failure while serving: socket errors just close; a decoder exception is a 400; anything else is a bug,
     * logged and answered 500 {@code internal_error} (unless a stream's response has begun), then closed.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            // a reset connection's close fails each write still queued, and each failure lands here: thousands
            // for a reader that stopped reading. One line and one close per connection, the rest returns at once
            if (!failureLogged) {
                failureLogged = true;
                if (LOG.isDebugEnabled()) {
                    LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(),
                            Redaction.of(cause.toString()));
                }
            }
            if (ctx.channel().isOpen()) {
                ctx.close();
            }
            return;
        }
        if (failed) {
            ctx.close();
            return;
        }
        if (cause instanceof DecoderException) {
            badRequest(ctx, "malformed HTTP message: " + cause.getMessage());
            return;
        }
        LOG.warn("request on {} failed", ctx.channel().remoteAddress(), Redaction.of(cause));
        order.stopWaiting();
        failed = true;
        endRoutes();
        if (subscribe != null && subscribe.isStreaming()) {
            ctx.close();
            return;
        }
        metrics.refused(Refusal.INTERNAL_ERROR);
        replies.error(ctx, null, "internal_error", HttpResponseStatus.INTERNAL_SERVER_ERROR,
                "internal error; the connection is closed", false);
    }
}
