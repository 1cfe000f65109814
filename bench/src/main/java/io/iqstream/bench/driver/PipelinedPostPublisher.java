package io.iqstream.bench.driver;

import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.netty.buffer.ByteBuf;
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

/**
 * A backend publishing one event per HTTP request, as an API that takes one message per request
 * (Mercure's publish, Centrifugo's {@code /api/publish}) has it do: every event one POST on the run's
 * keep-alive connection, pipelined when several are due in one loop turn (as the Nchan driver's HTTP
 * publisher does). Done when every request has been answered with 200; a response whose body names an
 * error ({@code "error"}: Centrifugo answers API errors with 200 and an error object) counts as failed.
 * Confined to the run's event loop.
 */
final class PipelinedPostPublisher extends Publisher {
  /** The request for one event: the request line, headers and body of the POST. */
  interface Request {
    void write(ByteBuf out, int index);
  }

  private static final byte[] ERROR = "\"error\"".getBytes(StandardCharsets.US_ASCII);

  private final Request request;
  private int sent;
  private int answered;
  private boolean failed;
  private boolean finished;

  private final ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      run.publisherReady();
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof HttpResponse r && r.status().code() != 200) {
          failed = true;
        }
        if (msg instanceof HttpContent c && contains(c.content(), ERROR)) {
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

  private PipelinedPostPublisher(Run run, Request request) {
    super(run);
    this.request = request;
  }

  /** Connects the run's publisher to {@code server}; it calls publisherReady once connected. */
  static PipelinedPostPublisher open(Shard shard, Run run, SocketAddress server, Request request) {
    PipelinedPostPublisher p = new PipelinedPostPublisher(run, request);
    shard.connect(server, ch -> p.channel = ch, () -> run.publisherClosed(false),
        new HttpResponseDecoder(), p.handler);
    return p;
  }

  static boolean contains(ByteBuf buf, byte[] needle) {
    int end = buf.writerIndex() - needle.length;
    outer:
    for (int i = buf.readerIndex(); i <= end; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (buf.getByte(i + j) != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
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
