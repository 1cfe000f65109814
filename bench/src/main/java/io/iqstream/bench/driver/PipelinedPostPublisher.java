package io.iqstream.bench.driver;

import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.IntPredicate;

/**
 * A backend publishing one event per HTTP request, as an API that takes one message per request
 * (Mercure's publish, Centrifugo's {@code /api/publish}, Nchan's HTTP publisher) has it do: every
 * event one POST on the run's keep-alive connection, pipelined when several are due in one loop turn.
 * Done when every request has been answered with an accepted status; a response whose body names an
 * error ({@code "error"}: Centrifugo answers API errors with 200 and an error object) counts as failed.
 * A protocol whose stream must exist before it is written to (Durable Streams' PUT) sends an opening
 * request first: the events wait for its accepted answer, and a refusal ends the publisher as failed.
 * Confined to the run's event loop.
 */
final class PipelinedPostPublisher extends Publisher {
  /** The request for one event: the request line, headers and body of the POST. */
  interface Request {
    void write(ByteBuf out, int index);
  }

  /** The request that opens the connection (creates the stream), answered before any event is written. */
  interface Opening {
    void write(ByteBuf out);
  }

  /** What a response body naming an error holds. */
  private static final ByteBuf ERROR = Unpooled.unreleasableBuffer(
      Unpooled.copiedBuffer("\"error\"", StandardCharsets.US_ASCII)).asReadOnly();

  private final Request request;
  private final IntPredicate accepted;
  private final Opening opening;
  private final Runnable opened;
  private boolean openingPending;
  private int sent;
  private int answered;
  private boolean failed;
  private boolean finished;

  private final ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      if (opening == null) {
        run.publisherReady();
      } else {
        openingPending = true;
        ByteBuf buf = ctx.alloc().directBuffer(512);
        opening.write(buf);
        ctx.writeAndFlush(buf, ctx.voidPromise());
      }
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (openingPending) {
          openingAnswer(ctx, msg);
          return;
        }
        if (msg instanceof HttpResponse r && !accepted.test(r.status().code())) {
          failed = true;
        }
        if (msg instanceof HttpContent c && ByteBufUtil.indexOf(ERROR, c.content()) >= 0) {
          failed = true;
        }
        if (msg instanceof LastHttpContent) {
          answered++;
          if (finished && answered == sent) {
            ctx.close();
          }
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      run.publisherClosed(finished && answered == sent && !failed);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  };

  private PipelinedPostPublisher(Run run, Opening opening, Runnable opened, Request request,
      IntPredicate accepted) {
    super(run);
    this.opening = opening;
    this.opened = opened;
    this.request = request;
    this.accepted = accepted;
  }

  private void openingAnswer(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpResponse r && !accepted.test(r.status().code())) {
      failed = true;
    }
    if (msg instanceof LastHttpContent) {
      openingPending = false;
      if (failed) {
        ctx.close();
        return;
      }
      opened.run();
      run.publisherReady();
    }
  }

  /**
   * Connects the run's publisher to {@code server}, answers with 200 accepted; it calls
   * publisherReady once connected.
   */
  static PipelinedPostPublisher open(Shard shard, Run run, SocketAddress server, Request request) {
    return open(shard, run, server, request, status -> status == 200);
  }

  /** As {@link #open(Shard, Run, SocketAddress, Request)}, with the statuses {@code accepted}. */
  static PipelinedPostPublisher open(Shard shard, Run run, SocketAddress server, Request request,
      IntPredicate accepted) {
    return open(shard, run, server, null, null, request, accepted);
  }

  /**
   * As {@link #open(Shard, Run, SocketAddress, Request, IntPredicate)}, {@code opening} sent first: once it is
   * answered with an accepted status, {@code opened} runs and the events follow.
   */
  static PipelinedPostPublisher open(Shard shard, Run run, SocketAddress server, Opening opening,
      Runnable opened, Request request, IntPredicate accepted) {
    PipelinedPostPublisher p = new PipelinedPostPublisher(run, opening, opened, request, accepted);
    shard.connect(server, ch -> p.channel = ch, () -> run.publisherClosed(false),
        new HttpResponseDecoder(), p.handler);
    return p;
  }

  @Override
  public void writeEvent(int index) {
    Channel ch = channel;
    ByteBuf buf = ch.alloc().directBuffer(1024);
    request.write(buf, index);
    ch.write(buf, ch.voidPromise());
    sent++;
  }

  @Override
  public void finish() {
    finished = true;
    channel.flush();
    if (answered == sent) {
      channel.close();
    }
  }
}
