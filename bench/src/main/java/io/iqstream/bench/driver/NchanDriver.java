package io.iqstream.bench.driver;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Nchan's protocol: each event is one {@code POST /pub/<run>} on the run's keep-alive publisher
 * connection (pipelined when several are due in one turn); each browser is an EventSource on
 * {@code GET /sub/<run>?md5=..&expires=..} (its own signed link), resuming with Last-Event-ID. Nchan's
 * ids are its own ({@code <time>:<seq>}), so the checker identifies events by payload.
 */
public final class NchanDriver implements Driver {
  private final SocketAddress server;
  private final String hostHeader;
  private final String secret;

  public NchanDriver(String host, int port, String secret) {
    this.server = new InetSocketAddress(host, port);
    this.hostHeader = host + ":" + port;
    this.secret = secret;
  }

  @Override
  public boolean idIsIndex() {
    return false;
  }

  @Override
  public boolean resumes() {
    return true;
  }

  /** {@code md5=<base64url(md5(expires + channel + " " + secret))>&expires=<epoch s>}. */
  @Override
  public Object subscriberCredential(Run run) {
    long expires = System.currentTimeMillis() / 1000 + 3600;
    try {
      MessageDigest md5 = MessageDigest.getInstance("MD5");
      byte[] digest = md5.digest((expires + run.data().runId() + " " + secret)
          .getBytes(StandardCharsets.UTF_8));
      return "md5=" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest)
          + "&expires=" + expires;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    SseSubscriber.open(shard, run, server, (r, lastEventId) ->
        "GET /sub/" + r.data().runId() + "?" + r.credential() + " HTTP/1.1\r\n"
            + "Host: " + hostHeader + "\r\n"
            + "Accept: text/event-stream\r\n"
            + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n")
            + "\r\n");
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    PostPublisher p = new PostPublisher(run);
    shard.connect(server, p::attach, () -> run.publisherClosed(false), new HttpResponseDecoder(), p.handler);
    return p;
  }

  /** One POST per event on a keep-alive connection; done when every response has come back. */
  private final class PostPublisher extends Publisher {
    private final byte[] head;
    private int sent;
    private int answered;
    private boolean failed;
    private boolean finished;

    final ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
      @Override
      public void channelActive(ChannelHandlerContext ctx) {
        run.publisherReady();
        ctx.fireChannelActive();
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
          if (msg instanceof HttpResponse r) {
            int status = r.status().code();
            if (status != 201 && status != 202) {
              failed = true;
            }
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

    PostPublisher(Run run) {
      super(run);
      this.head = ("POST /pub/" + run.data().runId() + " HTTP/1.1\r\nHost: " + hostHeader
          + "\r\nContent-Type: application/json\r\nContent-Length: ")
          .getBytes(StandardCharsets.US_ASCII);
    }

    void attach(Channel ch) {
      this.channel = ch;
    }

    @Override
    public void writeEvent(int index) {
      byte[] event = run.data().event(index);
      ByteBuf buf = channel.alloc().directBuffer(head.length + event.length + 16);
      buf.writeBytes(head);
      ByteBufUtil.writeAscii(buf, Integer.toString(event.length));
      buf.writeByte('\r').writeByte('\n').writeByte('\r').writeByte('\n').writeBytes(event);
      channel.write(buf, channel.voidPromise());
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
}
