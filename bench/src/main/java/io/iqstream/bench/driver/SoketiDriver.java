package io.iqstream.bench.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Soketi's protocol (Pusher 7): each event is one signed Pusher HTTP API publish
 * ({@code POST /apps/<id>/events}, HMAC-SHA256 over method, path and sorted query with the body's MD5)
 * on the run's keep-alive publisher connection; each browser is a WebSocket on {@code /app/<key>}
 * subscribing to {@code private-<run>} with a per-connection HMAC signature (the app's auth endpoint's
 * work, done here) — Soketi checks it per subscription. Soketi keeps no history: a browser that drops
 * resubscribes and misses what was sent meanwhile, which the lost-on-reconnect column shows.
 */
public final class SoketiDriver implements Driver {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final SocketAddress server;
  private final String hostHeader;
  private final String appId;
  private final String key;
  private final String secret;
  private final URI wsUri;

  public SoketiDriver(String host, int port, String appId, String key, String secret) {
    this.server = new InetSocketAddress(host, port);
    this.hostHeader = host + ":" + port;
    this.appId = appId;
    this.key = key;
    this.secret = secret;
    this.wsUri = URI.create("ws://" + host + ":" + port + "/app/" + key
        + "?protocol=7&client=js&version=7.6.0&flash=false");
  }

  @Override
  public boolean idIsIndex() {
    return false;
  }

  /** Browsers drop and reconnect; there is no resume, so what they miss is lost. */
  @Override
  public boolean resumes() {
    return true;
  }

  /** No history: whatever a reconnected browser receives is live. */
  @Override
  public boolean replays() {
    return false;
  }

  private String hmacHex(String text) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return HexFormat.of().formatHex(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String md5Hex(byte[] body) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(body));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    WsBrowser browser = new WsBrowser(run);
    WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
        .webSocketUri(wsUri)
        .version(WebSocketVersion.V13)
        .customHeaders(new DefaultHttpHeaders())
        .maxFramePayloadLength(1 << 20)
        .handleCloseFrames(true)
        .build();
    Channel[] opened = new Channel[1];
    shard.connect(server, ch -> {
      opened[0] = ch;
      run.subscriberOpened(ch);
    }, () -> run.onSubscriberClosed(opened[0]), new HttpClientCodec(), new HttpObjectAggregator(1 << 16),
        new WebSocketClientProtocolHandler(config), browser);
  }

  /** A Pusher JS client: waits for its socket id, subscribes to the run's private channel. */
  private final class WsBrowser extends ChannelInboundHandlerAdapter {
    private final Run run;
    private final String channelName;

    WsBrowser(Run run) {
      this.run = run;
      this.channelName = "private-" + run.data().runId();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (!(msg instanceof TextWebSocketFrame frame)) {
          return;
        }
        long recvNs = System.nanoTime();
        JsonNode m = JSON.readTree(frame.text());
        String event = m.path("event").asText();
        switch (event) {
          case "pusher:connection_established" -> {
            String socketId = JSON.readTree(m.path("data").asText()).path("socket_id").asText();
            ObjectNode data = JSON.createObjectNode()
                .put("auth", key + ":" + hmacHex(socketId + ":" + channelName))
                .put("channel", channelName);
            ObjectNode sub = JSON.createObjectNode().put("event", "pusher:subscribe");
            sub.set("data", data);
            ctx.writeAndFlush(new TextWebSocketFrame(JSON.writeValueAsString(sub)));
            run.subscriberRequestSent(System.nanoTime());
          }
          case "ev" -> {
            byte[] payload = m.path("data").asText().getBytes(StandardCharsets.UTF_8);
            run.onEvent(ctx.channel(), null, Unpooled.wrappedBuffer(payload), recvNs);
          }
          case "pusher:error" -> run.subscriberEnded(ctx.channel(), false);
          default -> { }
        }
      } catch (Exception e) {
        ctx.fireExceptionCaught(e);
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      run.onSubscriberClosed(ctx.channel());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    ApiPublisher p = new ApiPublisher(shard, run);
    run.shard().loop().execute(run::publisherReady);
    return p;
  }

  /**
   * Signed HTTP API publishes of one run, in order. Soketi answers every API request with
   * {@code Connection: close}, so each publish is its own connection; the next event goes when the
   * previous one was answered (a backend's HTTP client does the same). Any delay shows up in the
   * latency, which runs from the schedule, and the wait in this queue shows in the generator's send
   * lag (recorded when the request is written), so a backlog marks the row {@code loadgen_limited}.
   */
  private final class ApiPublisher extends Publisher {
    private final Shard shard;
    private final String path = "/apps/" + appId + "/events";
    private int due;
    private int posted;
    private boolean inFlight;
    private boolean failed;
    private boolean finished;
    private boolean closed;

    ApiPublisher(Shard shard, Run run) {
      super(run);
      this.shard = shard;
    }

    /** Events wait for the previous publish's answer: each reports its own write time. */
    @Override
    public boolean writesAtOnce() {
      return false;
    }

    @Override
    public void writeEvent(int index) {
      due = index + 1;
      postNext();
    }

    private void postNext() {
      if (inFlight || closed || posted >= due) {
        if (!inFlight && finished && posted >= due && !closed) {
          closed = true;
          run.publisherClosed(!failed);
        }
        return;
      }
      inFlight = true;
      int index = posted;
      ByteBuf request = request(index);
      ChannelInboundHandlerAdapter answer = new ChannelInboundHandlerAdapter() {
        private boolean answered;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
          ctx.writeAndFlush(request);
          // the send lag is taken here, at the write, not when the event was queued behind the
          // previous publish: the queue is the generator's backlog (see loadgen_limited)
          run.eventWritten(index, System.nanoTime());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          try {
            if (msg instanceof HttpResponse r && r.status().code() != 200) {
              failed = true;
            }
            if (msg instanceof LastHttpContent) {
              answered = true;
              ctx.close();
            }
          } finally {
            ReferenceCountUtil.release(msg);
          }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
          if (!answered) {
            failed = true;
          }
          inFlight = false;
          posted++;
          postNext();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
          ctx.close();
        }
      };
      shard.connect(server, ch -> channel = ch, () -> {
        request.release();
        failed = true;
        closed = true;
        run.publisherClosed(false);
      }, new HttpResponseDecoder(), answer);
    }

    private ByteBuf request(int index) {
      String eventJson = new String(run.data().event(index), StandardCharsets.UTF_8);
      ObjectNode body = JSON.createObjectNode()
          .put("name", "ev")
          .put("channel", "private-" + run.data().runId())
          .put("data", eventJson);
      byte[] bodyBytes;
      try {
        bodyBytes = JSON.writeValueAsBytes(body);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      String query = "auth_key=" + key + "&auth_timestamp=" + (System.currentTimeMillis() / 1000)
          + "&auth_version=1.0&body_md5=" + md5Hex(bodyBytes);
      String signature = hmacHex("POST\n" + path + "\n" + query);
      String head = "POST " + path + "?" + query + "&auth_signature=" + signature + " HTTP/1.1\r\n"
          + "Host: " + hostHeader + "\r\nContent-Type: application/json\r\nContent-Length: "
          + bodyBytes.length + "\r\n\r\n";
      ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(head.length() + bodyBytes.length);
      buf.writeCharSequence(head, StandardCharsets.US_ASCII);
      buf.writeBytes(bodyBytes);
      return buf;
    }

    @Override
    public void flush() {
      // each publish flushes on its own connection
    }

    @Override
    public void finish() {
      finished = true;
      postNext();
    }

    @Override
    public void close() {
      closed = true;
      if (channel != null && channel.isRegistered()) {
        channel.close();
      }
    }
  }
}
