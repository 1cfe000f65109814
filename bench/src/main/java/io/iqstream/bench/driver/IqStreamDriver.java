package io.iqstream.bench.driver;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.iqstream.bench.storm.StormProtocol;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Keys;
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
import java.util.Date;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKey;

/**
 * IQ-Stream's own protocol: each run's backend streams its events in one chunked
 * {@code application/x-ndjson} POST (its fastest publish path: one request per run, one chunk per
 * event); each browser reads {@code GET /v1/runs/{id}/events} as SSE with its own HS256 JWT allowing
 * {@code subscribe} on that run only, and resumes with {@code Last-Event-ID}.
 */
public final class IqStreamDriver implements Driver, StormProtocol {
  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final SocketAddress server;
  private final String hostHeader;
  private final SecretKey key;
  private final String publisherToken;

  public IqStreamDriver(String host, int port, String jwtSecret) {
    this.server = new InetSocketAddress(host, port);
    this.hostHeader = host + ":" + port;
    this.key = Keys.hmacShaKeyFor(jwtSecret.getBytes(StandardCharsets.UTF_8));
    this.publisherToken = token(Map.of("publish", List.of("*")), "bench-backend");
  }

  private String token(Map<String, List<String>> rights, String subject) {
    return token(key, rights, subject);
  }

  /** An HS256 JWT with IQ-Stream's {@code iqstream} rights claim, valid a day (the Durable Streams driver's too). */
  static String token(SecretKey key, Map<String, List<String>> rights, String subject) {
    long now = System.currentTimeMillis();
    return Jwts.builder()
        .subject(subject)
        .issuedAt(new Date(now))
        .expiration(new Date(now + 24 * 3600_000L))
        .claim("iqstream", rights)
        .signWith(key, Jwts.SIG.HS256)
        .compact();
  }

  @Override
  public boolean idIsIndex() {
    return true;
  }

  @Override
  public boolean resumes() {
    return true;
  }

  @Override
  public Object subscriberCredential(Run run) {
    return token(Map.of("subscribe", List.of(run.data().runId())), "browser-" + run.data().runId());
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    SseSubscriber.open(shard, run, server, (r, lastEventId) ->
        "GET /v1/runs/" + r.data().runId() + "/events HTTP/1.1\r\n"
            + "Host: " + hostHeader + "\r\n"
            + "Accept: text/event-stream\r\n"
            + "Authorization: Bearer " + r.credential() + "\r\n"
            + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n")
            + "\r\n");
  }

  @Override
  public InetSocketAddress address() {
    return (InetSocketAddress) server;
  }

  @Override
  public String readerCredential(String runId, String reader) {
    return token(Map.of("subscribe", List.of(runId)), reader);
  }

  @Override
  public String subscribeRequest(String runId, String credential, String lastEventId) {
    return "GET /v1/runs/" + runId + "/events HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Accept: text/event-stream\r\n"
        + "Authorization: Bearer " + credential + "\r\n"
        + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n")
        + "\r\n";
  }

  @Override
  public byte[] publishOpening(String runId) {
    return ("POST /v1/runs/" + runId + "/events HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Authorization: Bearer " + publisherToken + "\r\n"
        + "Content-Type: application/x-ndjson\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
  }

  @Override
  public byte[] publishEvent(String runId, byte[] event) {
    byte[] size = (Integer.toHexString(event.length + 1) + "\r\n").getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[size.length + event.length + 3];
    System.arraycopy(size, 0, out, 0, size.length);
    System.arraycopy(event, 0, out, size.length, event.length);
    out[out.length - 3] = '\n';
    out[out.length - 2] = '\r';
    out[out.length - 1] = '\n';
    return out;
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    NdjsonPublisher p = new NdjsonPublisher(run);
    shard.connect(server, p::attach, () -> run.publisherClosed(false), new HttpResponseDecoder(), p.handler);
    return p;
  }

  /** One streamed chunked POST per run. */
  private final class NdjsonPublisher extends Publisher {
    private int status;
    private boolean answered;

    final ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
      @Override
      public void channelActive(ChannelHandlerContext ctx) {
        String head = "POST /v1/runs/" + run.data().runId() + "/events HTTP/1.1\r\n"
            + "Host: " + hostHeader + "\r\n"
            + "Authorization: Bearer " + publisherToken + "\r\n"
            + "Content-Type: application/x-ndjson\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n";
        ctx.writeAndFlush(ByteBufUtil.writeAscii(ctx.alloc(), head));
        run.publisherReady();
        ctx.fireChannelActive();
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
          if (msg instanceof HttpResponse r) {
            status = r.status().code();
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
        run.publisherClosed(answered && status == 200);
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
      }
    };

    NdjsonPublisher(Run run) {
      super(run);
    }

    void attach(Channel ch) {
      this.channel = ch;
    }

    @Override
    public void writeEvent(int index) {
      byte[] event = run.data().event(index);
      ByteBuf buf = channel.alloc().directBuffer(event.length + 16);
      ByteBufUtil.writeAscii(buf, Integer.toHexString(event.length + 1));
      buf.writeBytes(CRLF).writeBytes(event).writeByte('\n').writeBytes(CRLF);
      channel.write(buf, channel.voidPromise());
    }

    @Override
    public void finish() {
      channel.writeAndFlush(channel.alloc().directBuffer(5).writeBytes(LAST_CHUNK),
          channel.voidPromise());
    }
  }
}
