package io.iqstream.server.telemetry;

import io.iqstream.server.log.LogScope;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.List;

/**
 * A connection's request scope: one server span per traced request ({@link TracedRoute}), from its head read to its
 * response's end written, and the run id / stream path that log lines written while it is read name
 * ({@link LogScope}). Sits between the HTTP codec and the request handler, so it sees request heads, response heads
 * and response ends; an SSE stream's events are written below the codec and never pass here.
 *
 * <p>The span's parent is the request's {@code traceparent} (and its {@code baggage}): the caller's trace goes on
 * through here. The span's own context replaces them in the request's headers, so a request relayed to another
 * node carries it on. Answers go out in request order, so pipelined requests' spans end first-in, first-out.
 *
 * <p>Added to a connection only when tracing is on or log lines are JSON: with both off the request path has none
 * of this. One per connection, confined to its current event loop (it moves with the channel).
 */
public final class RequestScopeHandler extends ChannelDuplexHandler {
    /** The connection's handler, for the request's session to annotate its span ({@link RequestSpans}). */
    static final AttributeKey<RequestScopeHandler> KEY = AttributeKey.valueOf(RequestScopeHandler.class, "scope");
    private static final String NEXT_OFFSET = "Stream-Next-Offset";
    private static final String PEER_HEADER = "X-IQStream-Peer";

    static final TextMapGetter<HttpHeaders> GETTER = new TextMapGetter<>() {
        @Override
        @SuppressWarnings("deprecation") // still abstract in the API; the propagators here read by name
        public Iterable<String> keys(HttpHeaders carrier) {
            return carrier.names();
        }

        @Override
        public String get(HttpHeaders carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };
    static final TextMapSetter<HttpHeaders> SETTER = (carrier, key, value) -> carrier.set(key, value);

    private final Telemetry telemetry;
    private final String node;
    /** The requests read and not yet answered, oldest first. */
    private final ArrayDeque<RequestSpan> open = new ArrayDeque<>(2);

    /**
     * @param telemetry the server's traces ({@link Telemetry#OFF}: log scopes only)
     * @param node this node's name as its spans say it ({@code iqstream.node}), or null
     */
    public RequestScopeHandler(Telemetry telemetry, String node) {
        this.telemetry = telemetry;
        this.node = node;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        ctx.channel().attr(KEY).set(this);
    }

    /** The request being served (the oldest not yet answered), or null. */
    RequestSpan serving() {
        return open.peekFirst();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
            RequestSpan s = begin(ctx, request);
            if (s != null) {
                open.add(s);
            }
        }
        RequestSpan reading = open.peekLast();
        if (reading == null) {
            ctx.fireChannelRead(msg);
            return;
        }
        LogScope before = LogScope.enter(reading.runId(), reading.streamPath());
        Span span = reading.span();
        Scope scope = span == null ? null : span.makeCurrent();
        try {
            ctx.fireChannelRead(msg);
        } finally {
            if (scope != null) {
                scope.close();
            }
            LogScope.restore(before);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        RequestSpan head = open.peekFirst();
        if (head != null) {
            if (msg instanceof HttpResponse response) {
                head.status(response.status().code());
                String next = response.headers().get(NEXT_OFFSET);
                if (next != null && head.span() != null) {
                    head.span().setAttribute(TraceAttributes.STREAM_NEXT_OFFSET, next);
                }
            }
            if (msg instanceof LastHttpContent) {
                open.pollFirst();
                head.end(null);
            }
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // the request handler first: a publisher lost or a reader gone says so on its span, then the span ends
        ctx.fireChannelInactive();
        RequestSpan s;
        while ((s = open.pollFirst()) != null) {
            s.end("connection closed");
        }
    }

    private RequestSpan begin(ChannelHandlerContext ctx, HttpRequest request) {
        String uri = request.uri();
        int cut = uri.indexOf('?');
        int hash = uri.indexOf('#');
        if (hash >= 0 && (cut < 0 || hash < cut)) {
            cut = hash;
        }
        String rawPath = cut < 0 ? uri : uri.substring(0, cut);
        HttpMethod method = request.method();
        TracedRoute route = TracedRoute.of(method, rawPath);
        if (route == null) {
            return null;
        }
        if (!telemetry.isOn()) {
            return new RequestSpan(null, route);
        }
        HttpHeaders headers = request.headers();
        Context parent = telemetry.propagator().extract(Context.root(), headers, GETTER);
        SpanBuilder b = telemetry.tracer().spanBuilder(method.name() + " " + route.route())
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(TraceAttributes.HTTP_METHOD, method.name())
                .setAttribute(TraceAttributes.HTTP_ROUTE, route.route())
                .setAttribute(TraceAttributes.URL_PATH, rawPath)
                .setAttribute(TraceAttributes.URL_SCHEME, "http")
                .setAttribute(TraceAttributes.PROTOCOL_VERSION, request.protocolVersion().minorVersion() == 0
                        ? "1.0" : "1.1");
        SocketAddress remote = ctx.channel().remoteAddress();
        if (remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
            b.setAttribute(TraceAttributes.CLIENT_ADDRESS, inet.getAddress().getHostAddress());
        }
        String agent = headers.get(HttpHeaderNames.USER_AGENT);
        if (agent != null) {
            b.setAttribute(TraceAttributes.USER_AGENT, agent);
        }
        if (node != null) {
            b.setAttribute(TraceAttributes.NODE, node);
        }
        if (headers.contains(PEER_HEADER)) {
            b.setAttribute(TraceAttributes.FROM_PEER, true);
        }
        describe(b, route, method, request, cut < 0 ? null : uri);
        Span span = b.startSpan();
        // the span's context goes on with the request: a relay to another node forwards these headers
        telemetry.propagator().inject(parent.with(span), headers, SETTER);
        return new RequestSpan(span, route);
    }

    /** The attributes of the request's kind. */
    private static void describe(SpanBuilder b, TracedRoute route, HttpMethod method, HttpRequest request,
            String uriWithQuery) {
        switch (route.kind()) {
            case PUBLISH -> b.setAttribute(TraceAttributes.RUN_ID, route.key())
                    .setAttribute(TraceAttributes.MESSAGING_SYSTEM, "iqstream")
                    .setAttribute(TraceAttributes.MESSAGING_DESTINATION, route.key())
                    .setAttribute(TraceAttributes.MESSAGING_OPERATION_TYPE, "send")
                    .setAttribute(TraceAttributes.MESSAGING_OPERATION_NAME, "publish");
            case SUBSCRIBE -> b.setAttribute(TraceAttributes.RUN_ID, route.key())
                    .setAttribute(TraceAttributes.MESSAGING_SYSTEM, "iqstream")
                    .setAttribute(TraceAttributes.MESSAGING_DESTINATION, route.key())
                    .setAttribute(TraceAttributes.MESSAGING_OPERATION_TYPE, "receive")
                    .setAttribute(TraceAttributes.MESSAGING_OPERATION_NAME, "subscribe");
            case RUN -> b.setAttribute(TraceAttributes.RUN_ID, route.key());
            case THREAD_LISTING -> b.setAttribute(TraceAttributes.THREAD_ID, route.key());
            case STREAM -> {
                b.setAttribute(TraceAttributes.STREAM_PATH, route.key())
                        .setAttribute(TraceAttributes.STREAM_OPERATION, streamOperation(method));
                String length = request.headers().get(HttpHeaderNames.CONTENT_LENGTH);
                if (length != null) {
                    try {
                        b.setAttribute(TraceAttributes.HTTP_REQUEST_BODY_SIZE, Long.parseLong(length.trim()));
                    } catch (NumberFormatException e) {
                        // not a length: the request handler answers it 400
                    }
                }
                if (method.equals(HttpMethod.GET)) {
                    String live = uriWithQuery == null ? null : first(uriWithQuery, "live");
                    String offset = uriWithQuery == null ? null : first(uriWithQuery, "offset");
                    b.setAttribute(TraceAttributes.STREAM_READ_MODE, live == null ? "catch-up" : live);
                    if (offset != null) {
                        b.setAttribute(TraceAttributes.STREAM_OFFSET, offset);
                    }
                }
            }
            default -> { }
        }
    }

    private static String streamOperation(HttpMethod method) {
        return switch (method.name()) {
            case "PUT" -> "create";
            case "POST" -> "append";
            case "GET" -> "read";
            case "HEAD" -> "metadata";
            case "DELETE" -> "delete";
            default -> method.name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private static String first(String uri, String name) {
        List<String> values = new QueryStringDecoder(uri).parameters().get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}
