package io.iqstream.server.http;

import io.iqstream.server.worker.ChannelHandoff;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

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
    /**
     * The connection's handler: a held message goes to its dispatch once the connection goes on, and its caughtUp
     * runs once every held message went out and nothing waits again (the read-complete a body's route awaits). The
     * handler itself, whose context, body reader and metrics it uses, not copies of them or two lambdas: this is one
     * small object more per connection, idle readers' included (16 bytes with compressed pointers).
     */
    private final HttpRequestHandler handler;
    /** Messages read while the request before them cannot be served yet; made on first use. */
    private ArrayDeque<Object> held;
    private boolean waiting;

    AnswerOrder(HttpRequestHandler handler) {
        this.handler = handler;
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
        handler.body.pause();
        handler.ctx.channel().config().setAutoRead(false);
    }

    /**
     * Moves the connection to {@code owner} ({@link ChannelHandoff}); what arrives meanwhile is held. There,
     * {@code arrived} serves the request, then what was held goes on. {@code closed} runs when the connection
     * closed between loops (it then gets no {@code channelInactive}: what it holds is released there).
     */
    void moveTo(EventLoop owner, Runnable arrived, Runnable closed) {
        waiting = true;
        handler.metrics.channelMoves.increment();
        // an exception in arrived reaches exceptionCaught through the pipeline (ChannelHandoff): 500, closed
        ChannelHandoff.moveTo(handler.ctx.channel(), owner, () -> {
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
        if (!keptAlive || !handler.ctx.channel().isActive()) {
            release();
            handler.body.discard();
            return false;
        }
        goOn();
        return true;
    }

    /** Reading goes on: what was held is served in order, then the bytes the step-down kept since it paused. */
    void goOn() {
        handler.ctx.channel().config().setAutoRead(true);
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
            handler.dispatch(handler.ctx, held.poll());
        }
        if (!waiting) {
            handler.caughtUp();
        }
        if (!waiting) {
            // the bytes read after the request that paused the step-down: decoded now, in order
            handler.body.resume();
        }
    }

    private ArrayDeque<Object> held() {
        if (held == null) {
            held = new ArrayDeque<>(4);
        }
        return held;
    }
}
