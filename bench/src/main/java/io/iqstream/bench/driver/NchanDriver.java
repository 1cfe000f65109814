package io.iqstream.bench.driver;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.iqstream.bench.storm.StormProtocol;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Nchan's protocol. Publish, one of Nchan's two publishers ({@link Publish}): each event one
 * {@code POST /pub/<run>} on the run's keep-alive publisher connection (pipelined when several are due
 * in one turn), or each event one text frame on the run's WebSocket to {@code /pub/<run>} (Nchan's
 * WebSocket publisher). Each browser is an EventSource on
 * {@code GET /sub/<run>?md5=..&expires=..} (its own signed link), resuming with Last-Event-ID. Nchan's
 * ids are its own ({@code <time>:<seq>}), so the checker identifies events by payload.
 */
public final class NchanDriver implements Driver, StormProtocol {
  /** How a run's backend publishes to Nchan. */
  public enum Publish {
    /** One HTTP POST per event on a keep-alive connection. */
    HTTP_POST("HTTP POST per event (keep-alive)"),
    /** One WebSocket text frame per event on one connection per run. */
    WEBSOCKET("WebSocket publisher (a frame per event, one connection per run)");

    private final String description;

    Publish(String description) {
      this.description = description;
    }

    public String description() {
      return description;
    }
  }

  private final SocketAddress server;
  private final String host;
  private final int port;
  private final String hostHeader;
  private final String secret;
  private final Publish publish;

  public NchanDriver(String host, int port, String secret, Publish publish) {
    this.server = new InetSocketAddress(host, port);
    this.host = host;
    this.port = port;
    this.hostHeader = host + ":" + port;
    this.secret = secret;
    this.publish = publish;
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
    return signedLink(run.data().runId());
  }

  @Override
  public InetSocketAddress address() {
    return (InetSocketAddress) server;
  }

  @Override
  public String readerCredential(String runId, String reader) {
    return signedLink(runId);
  }

  @Override
  public String subscribeRequest(String runId, String credential, String lastEventId) {
    return "GET /sub/" + runId + "?" + credential + " HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Accept: text/event-stream\r\n"
        + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n")
        + "\r\n";
  }

  @Override
  public byte[] publishOpening(String runId) {
    return new byte[0];
  }

  @Override
  public byte[] publishEvent(String runId, byte[] event) {
    byte[] head = ("POST /pub/" + runId + " HTTP/1.1\r\nHost: " + hostHeader
        + "\r\nContent-Type: application/json\r\nContent-Length: " + event.length + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[head.length + event.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(event, 0, out, head.length, event.length);
    return out;
  }

  private String signedLink(String runId) {
    long expires = System.currentTimeMillis() / 1000 + 3600;
    try {
      MessageDigest md5 = MessageDigest.getInstance("MD5");
      byte[] digest = md5.digest((expires + runId + " " + secret)
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
    if (publish == Publish.WEBSOCKET) {
      WsPublisher p = new WsPublisher(run);
      WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
          .webSocketUri(URI.create("ws://" + host + ":" + port + "/pub/" + run.data().runId()))
          .version(WebSocketVersion.V13)
          .customHeaders(new DefaultHttpHeaders())
          .maxFramePayloadLength(1 << 20)
          .handleCloseFrames(true)
          .build();
      shard.connect(server, p::attach, () -> run.publisherClosed(false), new HttpClientCodec(),
          new HttpObjectAggregator(1 << 16), new WebSocketClientProtocolHandler(config), p.handler);
      return p;
    }
    // one POST per event on a keep-alive connection, accepted with 201 or 202
    byte[] head = ("POST /pub/" + run.data().runId() + " HTTP/1.1\r\nHost: " + hostHeader
        + "\r\nContent-Type: application/json\r\nContent-Length: ").getBytes(StandardCharsets.US_ASCII);
    return PipelinedPostPublisher.open(shard, run, server, (out, index) -> {
      byte[] event = run.data().event(index);
      out.writeBytes(head);
      ByteBufUtil.writeAscii(out, Integer.toString(event.length));
      out.writeByte('\r').writeByte('\n').writeByte('\r').writeByte('\n').writeBytes(event);
    }, status -> status == 201 || status == 202);
  }

  /**
   * One WebSocket per run to Nchan's WebSocket publisher: every event a text frame; the run ends with
   * a close frame, which Nchan answers after the frames before it. What Nchan sends back (channel
   * info) is read and dropped.
   */
  private static final class WsPublisher extends Publisher {
    private static final long CLOSE_WAIT_MS = 10_000;
    private boolean failed;
    private boolean finished;

    final ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
      @Override
      public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
          run.publisherReady();
        }
        ctx.fireUserEventTriggered(evt);
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        run.publisherClosed(finished && !failed);
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed = true;
        ctx.close();
      }
    };

    WsPublisher(Run run) {
      super(run);
    }

    void attach(Channel ch) {
      this.channel = ch;
    }

    @Override
    public void writeEvent(int index) {
      channel.write(new TextWebSocketFrame(Unpooled.wrappedBuffer(run.data().event(index))),
          channel.voidPromise());
    }

    @Override
    public void finish() {
      finished = true;
      channel.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.NORMAL_CLOSURE));
      // Nchan answers the close frame and the handler closes; if it never does, close anyway
      channel.eventLoop().schedule(() -> {
        channel.close();
      }, CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
    }
  }
}
