package io.iqstream.server.http;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.wire.HttpReplies;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The connection's own timers, one armed at a time:
 * <ul>
 *   <li><b>head</b> ({@code --header-timeout}): from accept, or from the first byte of a later request, until its
 *       line and headers are decoded whole. When it fires: 408 {@code header_timeout}, closed. A slowloris
 *       trickling a byte every few seconds is cut however slowly it sends. A new connection that sent nothing at
 *       all is closed without a reply (a browser's speculative preconnect must not read a 408 as the answer to
 *       the request it sends later).</li>
 *   <li><b>body</b> ({@code --body-timeout}): for a request whose route gathers its body whole before answering
 *       (a Durable Streams request, {@link #gatherBody}), from its head until its body's end. When it fires: 408
 *       {@code body_timeout}, closed; the route releases the part it held as the connection closes. A client that
 *       sends a head and all but the last byte of a body holds it no longer than this.</li>
 *   <li><b>idle</b> ({@code --idle-timeout}): from the end of a request and its response on a kept-alive
 *       connection until the next request's first byte (or, for a request answered before its body ended, until
 *       that body's end). When it fires: closed, no reply.</li>
 * </ul>
 * Otherwise no timer runs here between a request head and the end of its response: an open SSE stream or a
 * publishing request is not idle; they have their own timers (heartbeat and slow-subscriber cut, publisher and
 * run idle timeouts).
 *
 * <p>It sits after the HTTP codec (it sees decoded requests and written responses) with a small
 * {@link #arrivalWatch()} before it (it sees the first raw byte of a request). Confined to the connection's
 * current event loop; a timer that fires on a loop the connection has left hops to the new one.
 */
public final class RequestTimeoutHandler extends ChannelDuplexHandler {
    /**
     * HEAD: awaiting a head; BODY: a gathered body being awaited; IN_FLIGHT: request being served; REST: answered
     * early, rest of its body to come.
     */
    private enum State { HEAD, BODY, IN_FLIGHT, REST, IDLE }

    private final long headerTimeoutMs;
    private final long bodyTimeoutMs;
    private final long idleTimeoutMs;
    private final Metrics metrics;
    private final HttpReplies replies;
    private ChannelHandlerContext ctx;
    private State state = State.HEAD;
    private boolean headStarted;
    private boolean requestEnded;
    private boolean responseEnded;
    private ScheduledFuture<?> timer;
    private int generation;
    private long headStartNanos;
    private long activeNanos;
    private int requests;

    public RequestTimeoutHandler(long headerTimeoutMs, long bodyTimeoutMs, long idleTimeoutMs, Metrics metrics,
            HttpReplies replies) {
        this.headerTimeoutMs = headerTimeoutMs;
        this.bodyTimeoutMs = bodyTimeoutMs;
        this.idleTimeoutMs = idleTimeoutMs;
        this.metrics = metrics;
        this.replies = replies;
    }

    /** The handler to put before the codec: a request's first byte on an idle connection starts its head timer. */
    public ChannelInboundHandler arrivalWatch() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext c, Object msg) {
                if (state == State.IDLE) {
                    state = State.HEAD;
                    arm(headerTimeoutMs);
                }
                if (state == State.HEAD) {
                    if (!headStarted) {
                        headStartNanos = System.nanoTime();
                    }
                    headStarted = true;
                }
                c.fireChannelRead(msg);
            }
        };
    }

    /** When the first byte of the request now being served was read ({@link System#nanoTime()}). */
    public long headStartNanos() {
        return headStartNanos;
    }

    /**
     * For the connection's first request: from the connection's activation (its accept, on the same loop turn) to
     * that request's first byte read, in nanoseconds; -1 for any later request on the connection.
     */
    public long acceptToHeadNanos() {
        return requests == 1 ? headStartNanos - activeNanos : -1;
    }

    /**
     * The request now served gathers its body before it is answered: its end must arrive within
     * {@code --body-timeout} of now (else 408, closed). Nothing when the body has already ended, or when the
     * request was answered already. On the connection's loop.
     */
    public void gatherBody() {
        if (state == State.IN_FLIGHT && !requestEnded && !responseEnded && ctx.channel().isActive()) {
            state = State.BODY;
            arm(bodyTimeoutMs);
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext context) {
        this.ctx = context;
    }

    @Override
    public void channelActive(ChannelHandlerContext context) {
        activeNanos = System.nanoTime();
        arm(headerTimeoutMs);
        context.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext context, Object msg) {
        if (msg instanceof HttpRequest) {
            cancel();
            requests++;
            state = State.IN_FLIGHT;
            headStarted = false;
            requestEnded = false;
            responseEnded = false;
        }
        if (msg instanceof LastHttpContent) {
            requestEnded = true;
            if (state == State.BODY) {
                cancel();
                state = State.IN_FLIGHT;
            }
            maybeIdle();
        }
        context.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext context, Object msg, ChannelPromise promise) {
        boolean interim = msg instanceof HttpResponse r && r.status().codeClass() == HttpStatusClass.INFORMATIONAL;
        if (msg instanceof LastHttpContent && !interim) {
            responseEnded = true;
            maybeIdle();
        }
        context.write(msg, promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
        cancel();
        context.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext context) {
        cancel();
    }

    private void maybeIdle() {
        if (state == State.BODY && responseEnded) {
            // answered before its gathered body ended (a refusal): the rest comes under the idle timer
            state = State.IN_FLIGHT;
        }
        if (state != State.IN_FLIGHT && state != State.REST || !responseEnded || !ctx.channel().isActive()) {
            return;
        }
        if (requestEnded) {
            state = State.IDLE;
            arm(idleTimeoutMs);
        } else if (state == State.IN_FLIGHT) {
            // answered before its body ended (e.g. 404 to a POST): the rest must come within the idle timeout
            state = State.REST;
            arm(idleTimeoutMs);
        }
    }

    private void arm(long delayMs) {
        cancel();
        int armed = ++generation;
        timer = ctx.executor().schedule(() -> fire(armed), delayMs, TimeUnit.MILLISECONDS);
    }

    private void cancel() {
        generation++;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void fire(int armed) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> fire(armed));
            return;
        }
        if (armed != generation || !ctx.channel().isActive()) {
            return;
        }
        timer = null;
        if (state == State.HEAD && !headStarted) {
            metrics.headerTimeouts.increment();
            ctx.close();
        } else if (state == State.HEAD) {
            metrics.headerTimeouts.increment();
            replies.error(ctx, null, "header_timeout", HttpResponseStatus.REQUEST_TIMEOUT,
                    "the request line and headers did not arrive within " + headerTimeoutMs + " ms", false);
        } else if (state == State.BODY) {
            metrics.bodyTimeouts.increment();
            replies.error(ctx, null, "body_timeout", HttpResponseStatus.REQUEST_TIMEOUT,
                    "the request body did not arrive whole within " + bodyTimeoutMs + " ms", false);
        } else if (state == State.IDLE || state == State.REST) {
            metrics.idleTimeouts.increment();
            ctx.close();
        }
    }
}
