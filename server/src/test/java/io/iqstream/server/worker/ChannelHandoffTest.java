package io.iqstream.server.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A connection moved between loops over real sockets and real NIO loops: one closed while it is between them (its
 * old loop saw the reset after the deregistration, before the new loop registered it) gets no {@code
 * channelInactive} from Netty, so the move hands it to its pipeline itself, and what the pipeline's decoders hold (an
 * HTTP request's first bytes) is released, not left for the garbage collector.
 */
class ChannelHandoffTest {
    /** Keeps every byte read, never a whole message: what the HTTP codec holds mid-request. */
    private static final class Holding extends ByteToMessageDecoder {
        private volatile ByteBuf held;
        private final CountDownLatch read = new CountDownLatch(1);

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            held = in;
            read.countDown();
        }
    }

    @Test
    void aConnectionClosedBetweenLoopsReleasesWhatItsDecoderHolds() throws Exception {
        EventLoopGroup fromGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup toGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        Holding decoder = new Holding();
        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        try {
            Channel server = new ServerBootstrap().group(fromGroup).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(decoder);
                            accepted.complete(ch);
                        }
                    }).bind("127.0.0.1", 0).sync().channel();
            try (Socket client = new Socket()) {
                client.connect((InetSocketAddress) server.localAddress());
                client.getOutputStream().write("GET /v1/runs/r/events HTTP/1.1\r\nHost: x\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                Channel channel = accepted.get(10, TimeUnit.SECONDS);
                assertTrue(decoder.read.await(10, TimeUnit.SECONDS), "the request's first bytes were read");
                EventLoop from = channel.eventLoop();
                EventLoop to = toGroup.next();
                // the new loop is busy, so the move waits between loops until the gate opens
                CountDownLatch gate = new CountDownLatch(1);
                to.execute(() -> {
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                CountDownLatch failed = new CountDownLatch(1);
                CountDownLatch arrived = new CountDownLatch(1);
                from.execute(() -> ChannelHandoff.moveTo(channel, to, arrived::countDown, failed::countDown));
                while (channel.isRegistered() || channel.eventLoop() != to) {
                    Thread.sleep(1);
                }
                // what the old loop does on a reset read: the connection closes while on no loop
                from.submit(() -> channel.unsafe().close(channel.unsafe().voidPromise())).sync();
                gate.countDown();
                assertTrue(failed.await(10, TimeUnit.SECONDS), "the move failed (the connection closed)");
                assertEquals(1, arrived.getCount(), "it never arrived");
                int refCnt = to.submit(() -> decoder.held.refCnt()).get(10, TimeUnit.SECONDS);
                assertEquals(0, refCnt, "the bytes the decoder held were released");
            } finally {
                server.close().sync();
            }
        } finally {
            fromGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            toGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /**
     * A connection moved to a loop that is shutting down (the server closes while it is between loops) is closed,
     * not served: the loop closes its channels once, then ends after its last tasks, so one registered by those
     * tasks would be left open and never released.
     */
    @Test
    void aConnectionMovedToALoopShuttingDownIsClosedNotLeftOnIt() throws Exception {
        EventLoopGroup fromGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup toGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        Holding decoder = new Holding();
        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        try {
            Channel server = new ServerBootstrap().group(fromGroup).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(decoder);
                            accepted.complete(ch);
                        }
                    }).bind("127.0.0.1", 0).sync().channel();
            try (Socket client = new Socket()) {
                client.connect((InetSocketAddress) server.localAddress());
                client.getOutputStream().write("GET /v1/runs/r/events HTTP/1.1\r\nHost: x\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                Channel channel = accepted.get(10, TimeUnit.SECONDS);
                assertTrue(decoder.read.await(10, TimeUnit.SECONDS), "the request's first bytes were read");
                EventLoop to = toGroup.next();
                CountDownLatch gate = new CountDownLatch(1);
                to.execute(() -> {
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                CountDownLatch failed = new CountDownLatch(1);
                CountDownLatch arrived = new CountDownLatch(1);
                channel.eventLoop().execute(() -> ChannelHandoff.moveTo(channel, to, arrived::countDown,
                        failed::countDown));
                while (channel.isRegistered() || channel.eventLoop() != to) {
                    Thread.sleep(1);
                }
                // the loop is told to go while the registration waits in its queue: it runs it with its last tasks
                toGroup.shutdownGracefully(0, 10, TimeUnit.SECONDS);
                gate.countDown();
                assertTrue(toGroup.awaitTermination(30, TimeUnit.SECONDS), "the loop ended");
                assertEquals(0, failed.getCount(), "the move was refused (the loop was going away)");
                assertEquals(1, arrived.getCount(), "nothing was served on it");
                assertTrue(!channel.isOpen(), "the connection was closed");
                assertEquals(0, decoder.held.refCnt(), "the bytes the decoder held were released");
            } finally {
                server.close().sync();
            }
        } finally {
            fromGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            toGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
