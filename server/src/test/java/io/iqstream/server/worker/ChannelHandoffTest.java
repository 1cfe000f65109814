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
 * channelInactive} from Netty, so the move hands it to its pipeline itself; one that arrives on a loop shutting down
 * is closed there. Either way what the pipeline's decoders hold (an HTTP request's first bytes) is released, not
 * left for the garbage collector.
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

    /**
     * A connection accepted on a loop of its own, its decoder holding a request's first bytes, and a second loop it
     * can move to, kept busy until {@link #open} so that the move waits between the two.
     */
    private static final class Stage implements AutoCloseable {
        final EventLoopGroup fromGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        final EventLoopGroup toGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        final EventLoop to = toGroup.next();
        final Holding decoder = new Holding();
        final CountDownLatch arrived = new CountDownLatch(1);
        final CountDownLatch failed = new CountDownLatch(1);
        private final CountDownLatch gate = new CountDownLatch(1);
        private final Channel server;
        private final Socket client = new Socket();
        final Channel channel;

        Stage() throws Exception {
            CompletableFuture<Channel> accepted = new CompletableFuture<>();
            server = new ServerBootstrap().group(fromGroup).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(decoder);
                            accepted.complete(ch);
                        }
                    }).bind("127.0.0.1", 0).sync().channel();
            client.connect((InetSocketAddress) server.localAddress());
            client.getOutputStream().write("GET /v1/runs/r/events HTTP/1.1\r\nHost: x\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            channel = accepted.get(10, TimeUnit.SECONDS);
            assertTrue(decoder.read.await(10, TimeUnit.SECONDS), "the request's first bytes were read");
            to.execute(() -> {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        /** Starts the move on the connection's loop; returns once it waits between the loops. */
        void moveAndWait() throws InterruptedException {
            channel.eventLoop().execute(() -> ChannelHandoff.moveTo(channel, to, arrived::countDown,
                    failed::countDown));
            while (channel.isRegistered() || channel.eventLoop() != to) {
                Thread.sleep(1);
            }
        }

        /** Lets the second loop go on: it registers the connection (or fails to). */
        void open() {
            gate.countDown();
        }

        @Override
        public void close() throws Exception {
            gate.countDown();
            client.close();
            server.close().sync();
            fromGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            toGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aConnectionClosedBetweenLoopsReleasesWhatItsDecoderHolds() throws Exception {
        try (Stage stage = new Stage()) {
            stage.moveAndWait();
            Channel channel = stage.channel;
            // what the old loop does on a reset read: the connection closes while on no loop
            stage.fromGroup.submit(() -> channel.unsafe().close(channel.unsafe().voidPromise())).sync();
            stage.open();
            assertTrue(stage.failed.await(10, TimeUnit.SECONDS), "the move failed (the connection closed)");
            assertEquals(1, stage.arrived.getCount(), "it never arrived");
            int refCnt = stage.to.submit(() -> stage.decoder.held.refCnt()).get(10, TimeUnit.SECONDS);
            assertEquals(0, refCnt, "the bytes the decoder held were released");
        }
    }

    /**
     * A connection moved to a loop that is shutting down (the server closes while it is between loops) is closed,
     * not served: the loop closes its channels once, then ends after its last tasks, so one registered by those
     * tasks would be left open and never released.
     */
    @Test
    void aConnectionMovedToALoopShuttingDownIsClosedNotLeftOnIt() throws Exception {
        try (Stage stage = new Stage()) {
            stage.moveAndWait();
            // the loop is told to go while the registration waits in its queue: it runs it with its last tasks
            stage.toGroup.shutdownGracefully(0, 10, TimeUnit.SECONDS);
            stage.open();
            assertTrue(stage.toGroup.awaitTermination(30, TimeUnit.SECONDS), "the loop ended");
            assertEquals(0, stage.failed.getCount(), "the move was refused (the loop was going away)");
            assertEquals(1, stage.arrived.getCount(), "nothing was served on it");
            assertTrue(!stage.channel.isOpen(), "the connection was closed");
            assertEquals(0, stage.decoder.held.refCnt(), "the bytes the decoder held were released");
        }
    }
}
