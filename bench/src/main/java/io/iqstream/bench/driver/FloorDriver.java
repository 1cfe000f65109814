package io.iqstream.bench.driver;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.iqstream.bench.load.SseParser;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The floor: a plain TCP relay (HAProxy, mode tcp) between each publisher and its browser. The
 * publisher connects to the relay and writes {@code RUN <id>\n} then the run's events as SSE frames
 * ({@code id: N\ndata: <json>\n\n}); the relay connects to this generator's listener (one per
 * generator thread, so the accepted side lands on the run's own loop), which reads the first line to
 * pair the connection with its run and then parses the same SSE. No auth, no storage, no resume: the
 * cost of moving the bytes.
 */
public final class FloorDriver implements Driver {
  private final List<Channel> listeners = new ArrayList<>();
  private final List<Integer> listenPorts = new ArrayList<>();
  private List<Integer> relayPorts = List.of();

  /** Binds one listener per generator loop; returns their ports (the relay's backends). */
  public List<Integer> bind(LoadGenerator generator) {
    for (EventLoop loop : generator.loops()) {
      ServerBootstrap b = new ServerBootstrap()
          .group(loop, loop)
          .channel(generator.transport().serverChannel())
          .option(ChannelOption.SO_BACKLOG, 4096)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
              ch.pipeline().addLast(new AcceptedBrowser(generator, loop));
            }
          });
      Channel ch = b.bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
      listeners.add(ch);
      listenPorts.add(((InetSocketAddress) ch.localAddress()).getPort());
    }
    return List.copyOf(listenPorts);
  }

  /** The relay's frontend ports, one per generator loop (same order as {@link #bind}). */
  public void relayPorts(List<Integer> ports) {
    this.relayPorts = List.copyOf(ports);
  }

  @Override
  public boolean idIsIndex() {
    return true;
  }

  @Override
  public boolean resumes() {
    return false;
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    // the browser side arrives through the relay when the publisher connects
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    RawPublisher p = new RawPublisher(run);
    SocketAddress server = new InetSocketAddress("127.0.0.1", relayPorts.get(shard.index()));
    shard.connect(server, p::channel, () -> run.publisherClosed(false), p.handler);
    return p;
  }

  @Override
  public void close() {
    listeners.forEach(Channel::close);
  }

  private static final class RawPublisher extends Publisher {
    private boolean finished;

    final ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
      @Override
      public void channelActive(ChannelHandlerContext ctx) {
        ctx.writeAndFlush(ByteBufUtil.writeAscii(ctx.alloc(), "RUN " + run.data().runId() + "\n"));
        run.publisherReady();
        ctx.fireChannelActive();
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        run.publisherClosed(finished);
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }
    };

    RawPublisher(Run run) {
      super(run);
    }

    void channel(Channel ch) {
      this.channel = ch;
    }

    @Override
    public void writeEvent(int index) {
      byte[] event = run.data().event(index);
      ByteBuf buf = channel.alloc().directBuffer(event.length + 24);
      buf.writeBytes(ID);
      ByteBufUtil.writeAscii(buf, Integer.toString(index + 1));
      buf.writeBytes(DATA).writeBytes(event).writeByte('\n').writeByte('\n');
      channel.write(buf, channel.voidPromise());
    }

    @Override
    public void finish() {
      finished = true;
      // close once every byte written before has gone out
      channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
  }

  /** The browser end of a relayed connection, paired with its run by the first line. */
  private static final class AcceptedBrowser extends ChannelInboundHandlerAdapter
      implements SseParser.Listener {
    private final LoadGenerator generator;
    private final EventLoop loop;
    private final SseParser parser = new SseParser(this);
    private ByteBuf head;
    private Run run;
    private Channel channel;
    private long recvNs;

    AcceptedBrowser(LoadGenerator generator, EventLoop loop) {
      this.generator = generator;
      this.loop = loop;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf in = (ByteBuf) msg;
      try {
        recvNs = System.nanoTime();
        channel = ctx.channel();
        if (run == null) {
          if (head == null) {
            head = ctx.alloc().heapBuffer(64);
          }
          head.writeBytes(in);
          int nl = head.indexOf(head.readerIndex(), head.writerIndex(), (byte) '\n');
          if (nl < 0) {
            return;
          }
          String line = head.toString(head.readerIndex(), nl - head.readerIndex(),
              StandardCharsets.US_ASCII);
          head.readerIndex(nl + 1);
          Shard shard = generator.shardOf(loop);
          run = line.startsWith("RUN ") && shard != null ? shard.activeRun(line.substring(4)) : null;
          if (run == null) {
            ctx.close();
            return;
          }
          run.subscriberOpened(ctx.channel());
          parser.feed(head, ctx.alloc());
          head.release();
          head = null;
          return;
        }
        parser.feed(in, ctx.alloc());
      } finally {
        in.release();
      }
    }

    @Override
    public void onEvent(String id, ByteBuf data) {
      run.onEvent(channel, id, data, recvNs);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      parser.release();
      if (head != null) {
        head.release();
        head = null;
      }
      if (run != null) {
        run.onSubscriberClosed(ctx.channel());
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
