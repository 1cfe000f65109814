package io.iqstream.server.wire;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection without destroying the answer just written to it (a lingering close, as nginx's
 * {@code lingering_close}). A refusal sent while the client is still writing its body (409 to a publish into an
 * ended run, 503 while draining, 413) used to be followed by an immediate close; with unread bytes in the socket
 * the kernel then sends a reset, and the client's stack could drop the answer and report only "connection reset".
 * Here the output is shut down once the answer is flushed (the client reads the answer, then the end of the
 * stream), everything still arriving is read and discarded before any decoding (no further request is served),
 * and the connection is closed when the client closes its side or after {@link #LINGER_MS}, whichever is first.
 * Confined to the channel's event loop.
 */
final class LingeringCloseHandler extends ChannelInboundHandlerAdapter {
    /** The longest a closing connection is held after its answer. */
    static final long LINGER_MS = 2_000;

    /** Package-private for the test that drives it on a channel of its own. */
    LingeringCloseHandler() {
    }

    /** Once {@code written} completes: shuts the output, discards input, closes within {@link #LINGER_MS}. */
    static void closeAfter(ChannelFuture written) {
        written.addListener(f -> {
            Channel ch = written.channel();
            if (!f.isSuccess() || !ch.isActive() || !(ch instanceof DuplexChannel duplex)) {
                ch.close();
                return;
            }
            ch.pipeline().addFirst(new LingeringCloseHandler());
            ch.config().setAutoRead(true); // a connection paused for back-pressure must still be drained
            duplex.shutdownOutput().addListener(s -> {
                if (!s.isSuccess()) {
                    ch.close();
                }
            });
            ch.eventLoop().schedule(() -> ch.close(), LINGER_MS, TimeUnit.MILLISECONDS);
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        ReferenceCountUtil.release(evt);
        // the client's end of stream (with half-closure allowed), or anything else: nothing more to wait for
        if (evt instanceof ChannelInputShutdownEvent) {
            ctx.close();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
