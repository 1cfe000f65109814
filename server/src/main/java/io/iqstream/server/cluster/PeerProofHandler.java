package io.iqstream.server.cluster;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpResponse;

/**
 * Signs this node's answer to a verified peer request: the next response head written on the connection after
 * {@link #expect} gets {@link PeerAuth#PROOF} for its status, so the asking node knows the secret's holder
 * answered (a probe's 200, a lookup's "held", a relayed response). Only on a clustered node's pipeline; a response
 * head passes it once per request, and the frames of a stream (written below the HTTP encoder) never do.
 *
 * <p>Confined to the connection's loop, like the request handler that arms it.
 */
public final class PeerProofHandler extends ChannelOutboundHandlerAdapter {
    private final PeerAuth auth;
    private PeerAuth.Incoming pending;

    public PeerProofHandler(PeerAuth auth) {
        this.auth = auth;
    }

    /** The answer to {@code request}, a verified peer request, is the next response head written. */
    public void expect(PeerAuth.Incoming request) {
        this.pending = request;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (pending != null && msg instanceof HttpResponse response) {
            response.headers().set(PeerAuth.PROOF, auth.prove(pending, response.status().code()));
            pending = null;
        }
        ctx.write(msg, promise);
    }
}
