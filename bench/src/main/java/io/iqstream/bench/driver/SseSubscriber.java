package io.iqstream.bench.driver;

import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.iqstream.bench.load.SseParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.net.SocketAddress;
import java.util.function.BiFunction;

/**
 * A browser's EventSource: one HTTP GET whose response is an SSE stream, parsed and fed to the run.
 * 200 streams; 204 means "nothing more" (ended run); anything else is a refused subscribe. Confined to
 * the run's event loop.
 */
public final class SseSubscriber extends ChannelInboundHandlerAdapter implements SseParser.Listener {
  /** Where an SSE event goes: the run, as it is ({@link Run#onEvent}), or a server's own framing first. */
  public interface Sink {
    void onEvent(Run run, Channel channel, String id, ByteBuf data, long recvNs);
  }

  private static final boolean DEBUG = System.getenv("IQSTREAM_BENCH_DEBUG") != null;
  private static final Sink TO_RUN = Run::onEvent;
  private final Run run;
  private final String request;
  private final Sink sink;
  private final SseParser parser = new SseParser(this);
  private Channel channel;
  private long recvNs;
  private boolean streaming;

  private SseSubscriber(Run run, String request, Sink sink) {
    this.run = run;
    this.request = request;
    this.sink = sink;
  }

  /**
   * Connects a subscriber for {@code run} to {@code server}; {@code request} makes the HTTP request
   * text from the run and its resume id (null on the first connection).
   */
  public static void open(Shard shard, Run run, SocketAddress server,
      BiFunction<Run, String, String> request) {
    open(shard, run, server, request, TO_RUN);
  }

  /**
   * As {@link #open(Shard, Run, SocketAddress, BiFunction)}, each event's data handed to {@code sink}
   * (a server whose SSE events wrap the payload in its own envelope unwraps it there).
   */
  public static void open(Shard shard, Run run, SocketAddress server,
      BiFunction<Run, String, String> request, Sink sink) {
    SseSubscriber handler = new SseSubscriber(run, request.apply(run, run.lastEventId()), sink);
    Channel[] opened = new Channel[1];
    shard.connect(server, ch -> {
      opened[0] = ch;
      run.subscriberOpened(ch);
    }, () -> run.onSubscriberClosed(opened[0]), new HttpResponseDecoder(4096, 16 * 1024, 64 * 1024), handler);
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    ctx.writeAndFlush(ByteBufUtil.writeAscii(ctx.alloc(), request));
    run.subscriberRequestSent(System.nanoTime());
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof HttpResponse response) {
        int status = response.status().code();
        if (DEBUG && (status != 200 || run.isReconnect())) {
          System.err.println("[bench debug] subscriber " + run.data().runId() + " reconnect="
              + run.isReconnect() + " -> " + response);
        }
        if (status == 200) {
          streaming = true;
        } else {
          run.subscriberEnded(ctx.channel(), status == 204);
          return;
        }
      }
      if (msg instanceof HttpContent content && streaming) {
        recvNs = System.nanoTime();
        ByteBuf buf = content.content();
        if (buf.isReadable()) {
          parser.feed(buf, ctx.alloc());
        }
        if (msg instanceof LastHttpContent) {
          if (DEBUG) {
            System.err.println("[bench debug] subscriber " + run.data().runId()
                + " response ended by the server");
          }
          ctx.close();
        }
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void onEvent(String id, ByteBuf data) {
    sink.onEvent(run, channel, id, data, recvNs);
  }

  @Override
  public void onRetry(long retryMs) {
    run.onRetry(retryMs);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (DEBUG && run.isReconnect()) {
      System.err.println("[bench debug] subscriber " + run.data().runId() + " inactive, active="
          + (channel != null) + " streaming=" + streaming);
    }
    parser.release();
    run.onSubscriberClosed(ctx.channel());
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (DEBUG) {
      System.err.println("[bench debug] subscriber " + run.data().runId() + ": " + cause);
      cause.printStackTrace();
    }
    ctx.close();
  }
}
