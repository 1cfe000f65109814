package io.iqstream.bench.storm;

import io.iqstream.bench.load.SseParser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;

/**
 * One browser of the storm: an SSE read of its run that keeps the last event id, every sequence number it got
 * (a duplicate counted), and, once cut, resumes with Last-Event-ID; a refused or reset connection, or an answer
 * other than 200, is tried again after the retry interval, as EventSource does. Confined to the storm's loop.
 */
final class StormReader implements SseParser.Listener {
  final Storm storm;
  final StormRun run;
  final int index;
  final InetSocketAddress source;
  String credential;
  final BitSet seen = new BitSet();
  /** Every sequence number below this one has been received. */
  int contiguous = 1;
  int duplicates;
  String lastEventId;
  long retryMs = -1;
  boolean cutting;
  boolean resuming;
  long requestNs;
  /** When the reconnect was due (the cut plus its draw from the window). */
  long dueNs;
  int target;
  long caughtUpNs;
  int reconnects;
  private boolean gotFirst;
  private Channel channel;

  StormReader(Storm storm, StormRun run, int index, InetSocketAddress source) {
    this.storm = storm;
    this.run = run;
    this.index = index;
    this.source = source;
  }

  void connect() {
    ChannelFuture f = storm.bootstrap().clone().handler(new Handler(new SseParser(this)))
        .connect(storm.protocol().address(), source);
    channel = f.channel();
    f.addListener(done -> {
      if (done.isSuccess()) {
        if (resuming) {
          requestNs = System.nanoTime();
          target = run.published;
        }
        f.channel().writeAndFlush(Unpooled.copiedBuffer(storm.protocol().subscribeRequest(run.runId, credential,
            lastEventId), StandardCharsets.US_ASCII), f.channel().voidPromise());
      } else {
        failed(done.cause());
      }
    });
  }

  /** The cut: the connection closed now, the reconnect {@code delayUs} later. */
  void cut(long delayUs) {
    cutting = true;
    resuming = true;
    requestNs = 0;
    caughtUpNs = 0;
    reconnects = 0;
    dueNs = System.nanoTime() + delayUs * 1000;
    if (channel != null) {
      channel.close();
    }
    storm.loop().schedule(this::reconnect, delayUs, TimeUnit.MICROSECONDS);
  }

  private void reconnect() {
    cutting = false;
    reconnects++;
    connect();
  }

  void close() {
    cutting = true;
    if (channel != null) {
      channel.close();
    }
  }

  private void failed(Throwable cause) {
    if (cutting) {
      return;
    }
    if (cause instanceof ConnectException) {
      storm.refused.incrementAndGet();
    } else {
      storm.reset.incrementAndGet();
    }
    retryLater();
  }

  private void retryLater() {
    cutting = true; // this connection is over; the next one opens after the retry interval
    if (channel != null) {
      channel.close();
    }
    storm.loop().schedule(this::reconnect, storm.config().retryMs(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void onEvent(String id, ByteBuf data) {
    if (id != null) {
      lastEventId = id;
    }
    int seq = (int) number(data, "\"s\":");
    if (seq < 1) {
      return;
    }
    storm.received.incrementAndGet();
    if (seen.get(seq)) {
      duplicates++;
    } else {
      seen.set(seq);
    }
    while (seen.get(contiguous)) {
      contiguous++;
    }
    if (!gotFirst) {
      gotFirst = true;
      storm.live.incrementAndGet();
    }
    if (run.calm) {
      storm.liveLatency(System.nanoTime() - number(data, "\"t\":"));
    } else if (resuming && caughtUpNs == 0 && requestNs != 0 && contiguous > target) {
      caughtUp();
    }
  }

  private void caughtUp() {
    caughtUpNs = System.nanoTime();
    storm.resumed.incrementAndGet();
  }

  @Override
  public void onRetry(long ms) {
    retryMs = ms;
  }

  /** The decimal number after {@code key} in {@code data}, or -1. */
  private static long number(ByteBuf data, String key) {
    String s = data.toString(StandardCharsets.UTF_8);
    int at = s.indexOf(key);
    if (at < 0) {
      return -1;
    }
    long n = 0;
    for (int i = at + key.length(); i < s.length() && Character.isDigit(s.charAt(i)); i++) {
      n = n * 10 + (s.charAt(i) - '0');
    }
    return n;
  }

  private final class Handler extends ChannelInboundHandlerAdapter {
    private final SseParser parser;
    private boolean ok;

    Handler(SseParser parser) {
      this.parser = parser;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      ctx.pipeline().addBefore(ctx.name(), null, new HttpResponseDecoder());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof HttpResponse r) {
          ok = r.status().code() == 200;
          if (!ok) {
            storm.notOk.incrementAndGet();
          } else if (resuming && caughtUpNs == 0 && requestNs != 0 && contiguous > target) {
            caughtUp(); // it had missed nothing
          }
        }
        if (ok && msg instanceof HttpContent c) {
          parser.feed(c.content(), ctx.alloc());
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      parser.release();
      if (ctx.channel() == channel && !cutting) {
        // the server ended the stream or refused it: back after the retry interval
        storm.reset.incrementAndGet();
        retryLater();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (ctx.channel() == channel && !cutting && cause instanceof IOException) {
        storm.reset.incrementAndGet();
        retryLater();
      } else {
        ctx.close();
      }
    }
  }
}
