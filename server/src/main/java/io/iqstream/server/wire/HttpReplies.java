package io.iqstream.server.wire;

import io.iqstream.server.metrics.Refusal;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * Writes complete (non-streaming) responses: JSON bodies, the JSON error shape
 * {@code {"error":code,"message":text[,"position":n]}}, plain text. Stateless; called on the connection's loop.
 */
public final class HttpReplies {
    private final CorsPolicy cors;

    public HttpReplies(CorsPolicy cors) {
        this.cors = cors;
    }

    /** An error reply whose code is the refusal's label. */
    public void error(ChannelHandlerContext ctx, HttpRequest request, Refusal reason, HttpResponseStatus status,
            String message, boolean keepAlive) {
        error(ctx, request, reason.label(), status, message, keepAlive);
    }

    /** An error reply with a code more precise than a refusal's label (e.g. {@code bad_run_id}). */
    public void error(ChannelHandlerContext ctx, HttpRequest request, String code, HttpResponseStatus status,
            String message, boolean keepAlive) {
        send(ctx, request, errorResponse(code, status, message, ""), keepAlive);
    }

    /**
     * A publish refused at the event at {@code position} (1-based in the body): the reply names it and the run's
     * last event, and the connection closes since the rest of the body is not read.
     */
    public void publishError(ChannelHandlerContext ctx, HttpRequest request, String code, HttpResponseStatus status,
            String message, long position, String runId, int lastEventId) {
        StringBuilder extra = new StringBuilder(64).append(",\"position\":").append(position).append(",\"runId\":");
        Json.quote(extra, runId);
        extra.append(",\"lastEventId\":").append(lastEventId);
        send(ctx, request, errorResponse(code, status, message, extra.toString()), false);
    }

    private static FullHttpResponse errorResponse(String code, HttpResponseStatus status, String message,
            String extraFields) {
        StringBuilder sb = new StringBuilder(96).append("{\"error\":");
        Json.quote(sb, code);
        sb.append(",\"message\":");
        Json.quote(sb, message);
        sb.append(extraFields).append('}');
        FullHttpResponse response = response(status, "application/json", sb.toString());
        if (status.code() == 503) {
            response.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        }
        if (status.code() == 401) {
            response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"iqstream\"");
        }
        return response;
    }

    public void json(ChannelHandlerContext ctx, HttpRequest request, HttpResponseStatus status, String body,
            boolean keepAlive) {
        send(ctx, request, response(status, "application/json", body), keepAlive);
    }

    public void text(ChannelHandlerContext ctx, HttpRequest request, HttpResponseStatus status, String contentType,
            String body, boolean keepAlive) {
        send(ctx, request, response(status, contentType, body), keepAlive);
    }

    public void empty(ChannelHandlerContext ctx, HttpRequest request, HttpResponseStatus status, boolean keepAlive) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
        if (status.code() != 204) {
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        }
        send(ctx, request, r, keepAlive);
    }

    /**
     * Sends a ready response with CORS and keep-alive handling; closes the connection when not kept alive, after
     * the client has had the answer ({@link LingeringCloseHandler}). Returns the write's future: done once the
     * answer is written out (or has failed).
     */
    public ChannelFuture send(ChannelHandlerContext ctx, HttpRequest request, FullHttpResponse response,
            boolean keepAlive) {
        if (request != null) {
            cors.apply(request, response.headers());
        }
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        ChannelFuture written = ctx.writeAndFlush(response);
        if (!keepAlive) {
            LingeringCloseHandler.closeAfter(written);
        }
        return written;
    }

    public static FullHttpResponse response(HttpResponseStatus status, String contentType, String body) {
        ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        return r;
    }
}
