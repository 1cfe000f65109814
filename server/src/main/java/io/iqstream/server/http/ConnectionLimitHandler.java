package io.iqstream.server.http;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * On a listener, before Netty's acceptor: each accepted connection takes one of the listener's {@link ConnectionSlots}
 * or is closed at once, right there on the accepting thread, before it is registered on any loop (no reply: nothing
 * has been read, and a refusal costs the least when it costs nothing). Refused in each connection's own pipeline,
 * on the loop it was handed to, a burst over the cap held a descriptor per refused connection until those loops got
 * round to closing them: 600 connections at once under a file limit of 512 met {@code EMFILE} ({@code FileLimitTest},
 * 3 runs in 5 on the 2-CPU VM). Closed here, refused connections hold one descriptor at a time. A slot taken is
 * given back when the connection closes.
 *
 * <p>Sharable: any listener's loop; its state is the slots' atomic counter.
 */
@ChannelHandler.Sharable
public final class ConnectionLimitHandler extends ChannelInboundHandlerAdapter {
    private final ConnectionSlots slots;
    /** One listener for every connection (no object per connection): its slot given back as it closes. */
    private final ChannelFutureListener closed;

    public ConnectionLimitHandler(ConnectionSlots slots) {
        this.slots = slots;
        this.closed = f -> slots.release(f.channel());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Channel child) {
            if (!slots.tryAcquire(child)) {
                child.unsafe().closeForcibly(); // not registered yet: its descriptor is closed now
                return;
            }
            child.closeFuture().addListener(closed);
        }
        ctx.fireChannelRead(msg);
    }
}
