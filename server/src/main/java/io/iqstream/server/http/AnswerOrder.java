package io.iqstream.server.http;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.worker.ChannelHandoff;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A connection's answers in request order, and its hand-off to another worker. While the request just read cannot
 * be served yet — the connection is moving to the worker that owns its run or stream, peers are asked where a run
 * lives, a thread listing is being gathered, a relayed or stored answer is still coming — what is read after it is
 * held here (messages the codec already decoded) or kept undecoded by the step-down ({@link ChunkedBodyReader}
 * paused); once the answer is out, or the connection arrived, the held messages are handed back to
 * {@link HttpRequestHandler} in order and the step-down goes on. So answers leave in request order (RFC 9112
 * section 9.3.2) and a body pipelined behind a request is never decoded before its head is served.
 *
 * <p>One per connection, made with its {@link HttpRequestHandler}; it follows the connection from loop to loop and
 * is confined to its current one. The queue is made on first use and holds a few messages at most (what one socket
 * read decoded), once per move or awaited answer, never per event.
 */
final class AnswerOrder {
    private final ChannelHandlerContext ctx;
    private final ChunkedBodyReader body;
    private final Metrics metrics;
    /** Where a held message goes once the connection goes on: the handler's dispatch. */
    private final Consumer<Object> dispatch;
    /** Run once every held message went out and nothing waits again: the read-complete a body's route awaits. */
    private final Runnable caughtUp;
    /** Messages read while the request before them cannot be served yet; made on first use. */
    private ArrayDeque<Object> held;
    private boolean waiting;

    AnswerOrder(ChannelHandlerContext ctx, ChunkedBodyReader body, Metrics metrics, Consumer<Object> dispatch,
            Runnable caughtUp) {
        this.ctx = ctx;
        this.body = body;
        this.metrics = metrics;
        this.dispatch = dispatch;
        this.caughtUp = caughtUp;
    }

    /** True while the request read last is not served yet: what is read meanwhile is {@link #hold held}. */
    boolean isWaiting() {
        return waiting;
    }

    /** Keeps {@code msg} until the connection goes on. */
    void hold(Object msg) {
        held().add(msg);
    }

    /** Keeps {@code msg} ahead of everything held. */
    void holdFirst(Object msg) {
        held().addFirst(msg);
    }

    /**
     * The request just read is answered later: nothing after it is decoded or served until {@link #answered} (or,
     * after a lookup at peers, {@link #goOn}).
     */
    void awaitAnswer() {
        waiting = true;
        body.pause();
        ctx.channel().config().setAutoRead(false);
    }

    /**
     * Moves the connection to {@code owner} ({@link ChannelHandoff}); what arrives meanwhile is held. There,
     * {@code arrived} serves the request, then what was held goes on. {@code closed} runs when the connection
     * closed between loops (it then gets no {@code channelInactive}: what it holds is released there).
     */
    void moveTo(EventLoop owner, Runnable arrived, Runnable closed) {
        waiting = true;
        metrics.channelMoves.increment();
        // an exception in arrived reaches exceptionCaught through the pipeline (ChannelHandoff): 500, closed
        ChannelHandoff.moveTo(ctx.channel(), owner, () -> {
            waiting = false;
            arrived.run();
            goOn();
        }, () -> {
            waiting = false;
            closed.run();
        });
    }

    /**
     * The answer awaited ({@link #awaitAnswer}) is written, on the connection's loop: what was held goes on, unless
     * that answer closed the connection; false then (what was held is released).
     */
    boolean answered(boolean keptAlive) {
        waiting = false;
        if (!keptAlive || !ctx.channel().isActive()) {
            release();
            body.discard();
            return false;
        }
        goOn();
        return true;
    }

    /** Reading goes on: what was held is served in order, then the bytes the step-down kept since it paused. */
    void goOn() {
        ctx.channel().config().setAutoRead(true);
        replay();
    }

    /** Nothing is awaited any more (the connection fails); what is held stays until {@link #release}. */
    void stopWaiting() {
        waiting = false;
    }

    /** Releases what is held (the connection is closed or failing). */
    void release() {
        while (held != null && !held.isEmpty()) {
            ReferenceCountUtil.release(held.poll());
        }
    }

    private void replay() {
        while (!waiting && held != null && !held.isEmpty()) {
            dispatch.accept(held.poll());
        }
        if (!waiting) {
            caughtUp.run();
        }
        if (!waiting) {
            // the bytes read after the request that paused the step-down: decoded now, in order
            body.resume();
        }
    }

    private ArrayDeque<Object> held() {
        if (held == null) {
            held = new ArrayDeque<>(4);
        }
        return held;
    }
}
