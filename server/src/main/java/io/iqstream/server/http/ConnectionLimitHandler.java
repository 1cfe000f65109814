package io.iqstream.server.http;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * First in every connection's pipeline: takes one of the listener's {@link ConnectionSlots} or closes the new
 * connection at once (no reply: nothing has been read, and a refusal costs the least when it costs nothing).
 * Once a slot is taken it is given back when the connection closes, and this handler leaves the pipeline.
 *
 * <p>Sharable: one per listener, any event loop; its state is the slots' atomic counter.
 */
@ChannelHandler.Sharable
public final class ConnectionLimitHandler extends ChannelInboundHandlerAdapter {
    private final ConnectionSlots slots;

    public ConnectionLimitHandler(ConnectionSlots slots) {
        this.slots = slots;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!slots.tryAcquire()) {
            ctx.close();
            return;
        }
        ctx.channel().closeFuture().addListener(closed -> slots.release());
        ctx.pipeline().remove(this);
        ctx.fireChannelActive();
    }
}
