package io.iqstream.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * The HTTP codec's stand-in on a connection whose live reader waits ({@link IqStreamInitializer#dropRequestPath}):
 * one instance for every connection, no state. The reader's chunks are written below it; what reaches it is the
 * response's end, an empty {@link LastHttpContent}, written as the last chunk {@code 0 CRLF CRLF} (the body was
 * chunked: a stripped reader is always HTTP/1.1), and raw bytes, passed on. Anything else is a bug: failed.
 */
@ChannelHandler.Sharable
final class StreamEndEncoder extends ChannelOutboundHandlerAdapter {
    static final StreamEndEncoder INSTANCE = new StreamEndEncoder();
    private static final ByteBuf LAST_CHUNK = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(5).writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII))).asReadOnly();

    private StreamEndEncoder() {
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf) {
            ctx.write(msg, promise);
            return;
        }
        if (msg instanceof LastHttpContent last && !last.content().isReadable()
                && last.trailingHeaders().isEmpty()) {
            last.release();
            ctx.write(LAST_CHUNK.duplicate(), promise);
            return;
        }
        ReferenceCountUtil.release(msg);
        promise.setFailure(new IllegalStateException("a waiting reader's connection wrote " + msg.getClass()
                + ": only chunks and the body's end go out while the request path is dropped"));
    }
}
