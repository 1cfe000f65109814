package io.iqstream.server.cluster;

import io.iqstream.server.metrics.ClusterMetrics;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Persistent HTTP/1.1 connections to peers, pooled per worker loop and per peer: a forward borrows an idle one (or
 * connects a new one on the same loop, so the client's and the peer's sockets are served by one thread with no
 * hand-off) and gives it back when the answer has been relayed whole and both sides allow keep-alive. A peer
 * closing an idle connection (its --idle-timeout) just removes it from the pool.
 *
 * <p>Each pool is confined to its loop (a {@link ThreadLocal} of the loop's thread). Nothing is bounded here: a
 * forward holds one client connection, so the peer connections are at most the forwarded requests in flight,
 * and the receiving node counts them under its own --max-connections like any client.
 */
final class PeerChannels {
    static final int CONNECT_TIMEOUT_MS = 2000;

    private final Class<? extends SocketChannel> channelClass;
    private final ClusterMetrics metrics;
    private final ThreadLocal<Map<Member, ArrayDeque<Channel>>> idle = ThreadLocal.withInitial(HashMap::new);

    PeerChannels(String transportName, ClusterMetrics metrics) {
        this.metrics = metrics;
        this.channelClass = switch (transportName) {
            case "epoll" -> EpollSocketChannel.class;
            case "io_uring" -> IoUringSocketChannel.class;
            default -> NioSocketChannel.class;
        };
    }

    /**
     * Calls {@code ready} with an open channel to {@code peer} on {@code loop} (now, or once connected), or
     * {@code failed} with why not. Must be called on {@code loop}; both callbacks run on it.
     */
    void acquire(EventLoop loop, Member peer, ForwardingSession session, BiConsumer<Channel, Throwable> done) {
        ArrayDeque<Channel> pool = idle.get().get(peer);
        while (pool != null && !pool.isEmpty()) {
            Channel c = pool.pollLast();
            if (c.isActive()) {
                c.pipeline().get(PeerHandler.class).session = session;
                c.config().setAutoRead(true);
                done.accept(c, null);
                return;
            }
        }
        PeerHandler handler = new PeerHandler();
        handler.session = session;
        ChannelFuture f = new Bootstrap()
                .group(loop)
                .channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MS)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(64 * 1024, 256 * 1024))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), handler);
                    }
                })
                .connect(peer.host(), peer.port());
        f.addListener((ChannelFutureListener) cf -> {
            if (cf.isSuccess()) {
                metrics.peerConnectionsOpen.increment();
                cf.channel().closeFuture().addListener(closed -> metrics.peerConnectionsOpen.decrement());
            }
            done.accept(cf.isSuccess() ? cf.channel() : null, cf.cause());
        });
    }

    /** Gives a channel whose exchange is complete back to its loop's pool. On the channel's loop. */
    void release(Member peer, Channel channel) {
        PeerHandler h = channel.pipeline().get(PeerHandler.class);
        if (h == null || !channel.isActive()) {
            channel.close();
            return;
        }
        h.session = null;
        channel.config().setAutoRead(true); // an idle peer's close must be seen
        idle.get().computeIfAbsent(peer, k -> new ArrayDeque<>(4)).addLast(channel);
    }

    /** The inbound end of a peer channel: hands everything to the forward that currently borrows it. */
    static final class PeerHandler extends ChannelInboundHandlerAdapter {
        ForwardingSession session;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (session != null) {
                session.fromPeer(msg);
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (session != null) {
                session.peerReadComplete();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (session != null) {
                session.peerWritabilityChanged();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            ForwardingSession s = session;
            session = null;
            if (s != null) {
                s.peerClosed();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
