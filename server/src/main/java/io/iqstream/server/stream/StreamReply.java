package io.iqstream.server.stream;


import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.ReadOnlyHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * The answers of one Durable Streams request: the protocol's headers on every answer (browser security headers,
 * CORS for {@code --durable-streams-open} or {@code --cors-origin}), plain-text refusals, Content-Length, and the
 * connection kept alive or closed after the answer. Also finds the request's stream, refusing 404 / 410.
 *
 * <p>One per request; confined to the owner worker's loop.
 */
final class StreamReply {
    final StreamExchange.Settings settings;
    final DurableStreams streams;
    final ChannelHandlerContext ctx;
    /** The request; null once a live SSE read has begun ({@link #forgetRequest}). */
    HttpRequest request;
    final String path;
    final boolean keepAlive;

    StreamReply(StreamExchange.Settings settings, ChannelHandlerContext ctx, HttpRequest request, String path,
            boolean keepAlive) {
        this.settings = settings;
        this.streams = settings.streams();
        this.ctx = ctx;
        this.request = request;
        this.path = path;
        this.keepAlive = keepAlive;
    }

    HttpRequest request() {
        return request;
    }

    /**
     * Keeps of the request only what a later answer reads (a long-poll waiting at its tail): its method, its
     * {@code Origin} (CORS) and {@code If-None-Match} (the catch-up answer's ETag check); its target and other
     * headers go.
     */
    void keepWhatAnAnswerNeeds() {
        HttpHeaders h = request.headers();
        String origin = h.get(HttpHeaderNames.ORIGIN);
        String ifNoneMatch = h.get(HttpHeaderNames.IF_NONE_MATCH);
        HttpHeaders kept = origin == null && ifNoneMatch == null ? EmptyHttpHeaders.INSTANCE
                : origin == null ? new ReadOnlyHttpHeaders(false, HttpHeaderNames.IF_NONE_MATCH, ifNoneMatch)
                : ifNoneMatch == null ? new ReadOnlyHttpHeaders(false, HttpHeaderNames.ORIGIN, origin)
                : new ReadOnlyHttpHeaders(false, HttpHeaderNames.ORIGIN, origin, HttpHeaderNames.IF_NONE_MATCH,
                        ifNoneMatch);
        request = new DefaultHttpRequest(request.protocolVersion(), request.method(), "", kept);
    }

    /** Drops the request (its head and headers): an SSE read answers nothing more that needs it. */
    void forgetRequest() {
        request = null;
    }

    /** The request's stream, or null after answering 404 (none) or 410 (soft-deleted). */
    DurableStream existing(long nowMs) {
        DurableStream s = streams.get(path, nowMs);
        if (s == null) {
            refuse(HttpResponseStatus.NOT_FOUND, "no stream at " + path);
            return null;
        }
        if (s.softDeleted) {
            refuse(HttpResponseStatus.GONE, "the stream was deleted");
            return null;
        }
        return s;
    }

    void overBudget() {
        FullHttpResponse r = response(HttpResponseStatus.SERVICE_UNAVAILABLE,
                "the server's memory budget is full; retry later");
        r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        send(r);
    }

    /**
     * The stream's file refused a write ({@link DurableStream#storageFailure}): {@code 507} when the disk is full,
     * else {@code 503}. What was acknowledged before is on the disk; the stream takes no write until a restart.
     */
    void storageFailed(java.io.IOException failure) {
        String why = String.valueOf(failure.getMessage());
        boolean full = why.contains("No space left on device") || why.contains("Disk quota exceeded");
        FullHttpResponse r = response(full ? HttpResponseStatus.INSUFFICIENT_STORAGE
                : HttpResponseStatus.SERVICE_UNAVAILABLE, (full ? "the disk is full" : "writing the stream's file "
                + "failed") + ": this write was not stored, and the stream takes no writes until the server restarts "
                + "(what was acknowledged before is kept)");
        send(r);
    }

    /**
     * The stream's file was found damaged at start ({@link DurableStreams#damageOf}): 500, whatever the request;
     * the file is kept as it is, and the stream is neither served nor created again until an operator moves it.
     */
    void damaged(String reason) {
        send(response(HttpResponseStatus.INTERNAL_SERVER_ERROR, "stream_damaged: the stream's file is damaged ("
                + reason + "): it is kept on the disk as it is, and the stream is not served nor created again; the"
                + " server's log names the file"));
    }

    /** The stream files have reached {@code --disk-budget}: 507; reads go on, DELETE and expiry give space back. */
    void diskFull() {
        send(response(HttpResponseStatus.INSUFFICIENT_STORAGE, "the streams' disk budget is full (--disk-budget): "
                + "nothing was stored; deleting or expiring streams gives space back"));
    }

    void refuse(HttpResponseStatus status, String message) {
        send(response(status, message));
    }

    FullHttpResponse response(HttpResponseStatus status, String message) {
        return response(status, "text/plain; charset=utf-8", message);
    }

    FullHttpResponse response(HttpResponseStatus status, String contentType, String body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        return r;
    }

    /**
     * An answer without a body. Its headers are not validated as they are set: every name is one of the protocol's
     * constants, every value the server's own (offsets, numbers, flags) or a value the request's decoder already
     * took as a header value (a content type, an expiry), which cannot hold a line break. An append's answer is
     * one of these, once per message.
     */
    static FullHttpResponse empty(HttpResponseStatus status) {
        return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER, TRUSTED_HEADERS,
                TRUSTED_HEADERS);
    }

    private static final DefaultHttpHeadersFactory TRUSTED_HEADERS =
            DefaultHttpHeadersFactory.headersFactory().withValidation(false);

    /** The headers every answer carries, a streamed (SSE) one's included. */
    void decorate(HttpHeaders h) {
        DurableStreamProtocol.securityHeaders(h);
        if (settings.open()) {
            h.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");
            h.set(HttpHeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, DurableStreamProtocol.CORS_EXPOSE_HEADERS);
        } else if (settings.cors().allowedOrigin(request) != null) {
            settings.cors().apply(request, h);
            h.set(HttpHeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, DurableStreamProtocol.CORS_EXPOSE_HEADERS);
        }
    }

    /** Sends {@code r}; the future is done once it is written out (or failed). */
    ChannelFuture send(FullHttpResponse r) {
        HttpHeaders h = r.headers();
        decorate(h);
        int status = r.status().code();
        if (status != 204 && status != 304) {
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
        }
        if (request != null && request.method().equals(HttpMethod.HEAD)) {
            r.content().clear();
        }
        return settings.replies().send(ctx, null, r, keepAlive);
    }

    /**
     * The stream's file could not be read, or did not hold what was acknowledged (logged where that was found):
     * 500 with {@code Retry-After}; its bytes are kept on the disk.
     */
    void fileUnreadable() {
        var r = response(HttpResponseStatus.INTERNAL_SERVER_ERROR, "the stream's file cannot be read: its bytes are "
                + "kept on the disk, not served; the server's log says why");
        r.headers().set(HttpHeaderNames.RETRY_AFTER, "5");
        send(r);
    }
}
