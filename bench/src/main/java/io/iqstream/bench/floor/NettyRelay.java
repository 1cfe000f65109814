package io.iqstream.bench.floor;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The JVM's floor: the TCP relay the HAProxy floor is, written on Netty 4.2's epoll transport as IQ-Stream's
 * server is (the same allocator, the same JVM flags when the bench starts it). Each frontend port relays every
 * connection it accepts to its backend port, byte for byte, both ways: a read is written to the other side as it
 * came (the same buffer, no copy) and flushed at the read's end, one event loop per CPU, the backend connected from
 * the loop that accepted. No HTTP, no parsing, no storage, no auth: what moving an event's bytes from one socket to
 * another costs on the JVM and Netty, under which no server built on them can go. Reading is on (autoRead) except
 * while the other side cannot take more, as IQ-Stream's publish connections: no per-read {@code epoll_ctl}.
 *
 * <p>Started as {@code java -cp iqstream-bench.jar io.iqstream.bench.floor.NettyRelay LOOPS BACKEND_PORT...}; prints
 * {@code netty-floor listening <port>,<port>...} (one frontend per backend, in order) once every port is bound, and
 * runs until killed.
 */
public final class NettyRelay {
  /** IQ-Stream's main-port marks: a side stops being writable with 256 KiB queued, writable again at 64. */
  private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(64 * 1024, 256 * 1024);
  /** As IQ-Stream's main port: one socket read per connection per loop turn. */
  private static final RecvByteBufAllocator ONE_READ_PER_TURN =
      new AdaptiveRecvByteBufAllocator().maxMessagesPerRead(1);

  private NettyRelay() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: NettyRelay LOOPS BACKEND_PORT...");
      System.exit(2);
    }
    int loops = Integer.parseInt(args[0]);
    List<Integer> backends = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      backends.add(Integer.parseInt(args[i]));
    }
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(loops, new DefaultThreadFactory("netty-floor"),
        EpollIoHandler.newFactory());
    List<String> ports = new ArrayList<>();
    for (int backend : backends) {
      ports.add(Integer.toString(bind(group, backend)));
    }
    System.out.println("netty-floor listening " + String.join(",", ports));
    System.out.flush();
    Thread.currentThread().join();
  }

  /** Binds a frontend on 127.0.0.1 relaying to {@code backendPort}; returns its port. */
  static int bind(EventLoopGroup group, int backendPort) {
    ServerBootstrap b = new ServerBootstrap()
        .group(group)
        .channel(EpollServerSocketChannel.class)
        .option(ChannelOption.SO_BACKLOG, 4096)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.AUTO_READ, false)
        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
        .childOption(ChannelOption.RCVBUF_ALLOCATOR, ONE_READ_PER_TURN)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast(new Frontend(backendPort));
          }
        });
    Channel server = b.bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** The accepted side: connects its backend from its own loop, then relays. */
  private static final class Frontend extends ChannelInboundHandlerAdapter {
    private final int backendPort;

    Frontend(int backendPort) {
      this.backendPort = backendPort;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      Channel inbound = ctx.channel();
      Bootstrap b = new Bootstrap()
          .group(inbound.eventLoop())
          .channel(EpollSocketChannel.class)
          .option(ChannelOption.TCP_NODELAY, true)
          .option(ChannelOption.AUTO_READ, false)
          .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
          .option(ChannelOption.RCVBUF_ALLOCATOR, ONE_READ_PER_TURN)
          .handler(new Pipe(inbound));
      b.connect(new InetSocketAddress("127.0.0.1", backendPort)).addListener((ChannelFutureListener) f -> {
        if (f.isSuccess()) {
          ctx.pipeline().replace(this, "pipe", new Pipe(f.channel()));
          inbound.config().setAutoRead(true);
          f.channel().config().setAutoRead(true);
        } else {
          inbound.close();
        }
      });
    }
  }

  /**
   * One direction: what its channel reads goes to {@code peer}, flushed at the read's end; reading stops while
   * the peer cannot take more and goes on once it can; a close or an error closes both.
   */
  static final class Pipe extends ChannelInboundHandlerAdapter {
    private final Channel peer;

    Pipe(Channel peer) {
      this.peer = peer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      peer.write(msg, peer.voidPromise());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      peer.flush();
      if (!peer.isWritable()) {
        ctx.channel().config().setAutoRead(false);
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      // this channel drained: the peer, paused while it could not write here, reads again
      if (ctx.channel().isWritable()) {
        peer.config().setAutoRead(true);
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      closeOnFlush(peer);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      closeOnFlush(ctx.channel());
    }

    private static void closeOnFlush(Channel ch) {
      if (ch.isActive()) {
        ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      }
    }
  }
}
