package io.iqstream.bench.driver;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Keys;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import javax.crypto.SecretKey;

/**
 * Centrifugo's protocol (v6), over its unidirectional SSE transport. Each run is the channel
 * {@code run:<run id>} of the namespace {@code run} (history and forced recovery). Its backend
 * publishes every event as one {@code POST /api/publish} ({@code {"channel": .., "data": <the event>}},
 * {@code X-API-Key}: Centrifugo's API takes one publication per request) on the run's keep-alive
 * connection ({@link PipelinedPostPublisher}). Each browser is an EventSource on
 * {@code GET /connection/uni_sse?cf_connect=<connect request>} whose connection JWT's {@code channels}
 * claim names its run's channel only (a server-side subscription: no token, or one signed with another
 * key, is refused at connect). Every SSE event is a Centrifugo push in JSON: the connect push (with the
 * subscription's epoch and stream offset, and any recovered publications), then one push per
 * publication ({@code {"channel": .., "pub": {"data": .., "offset": n}}}); the driver hands the run the
 * publication's {@code data} exactly as sent.
 *
 * <p>Resume is Centrifugo's recovery, not Last-Event-ID: the driver keeps each run's epoch and last
 * offset from the pushes ({@link Session}), and a reconnecting browser sends
 * {@code subs: {"run:<id>": {"recover": true, "epoch": .., "offset": ..}}} in its connect request; the
 * missed publications come in the connect push. The first connection recovers from offset 0 too, so a
 * subscription that takes hold after the run's first publication still gets it (as Nchan's
 * {@code nchan_subscriber_first_message oldest}).
 */
public final class CentrifugoDriver implements Driver {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonFactory FACTORY = JSON.getFactory();
  /**
   * Each event loop's copy of the push being read (the run's checker copies the payload into the
   * shard's own scratch, so the push cannot live there).
   */
  private static final ThreadLocal<byte[][]> PUSH = ThreadLocal.withInitial(() -> new byte[][] {
      new byte[16 * 1024]});
  /** The namespace of the runs' channels. */
  public static final String NAMESPACE = "run";

  private final SocketAddress server;
  private final String hostHeader;
  private final SecretKey tokenKey;
  private final String apiKey;
  private final int port;

  public CentrifugoDriver(String host, int port, String tokenSecret, String apiKey) {
    this.server = new InetSocketAddress(host, port);
    this.port = port;
    this.hostHeader = host + ":" + port;
    this.tokenKey = Keys.hmacShaKeyFor(tokenSecret.getBytes(StandardCharsets.UTF_8));
    this.apiKey = apiKey;
  }

  /** The channel of run {@code runId}. */
  public static String channel(String runId) {
    return NAMESPACE + ":" + runId;
  }

  /**
   * One browser's Centrifugo state over its reconnects: its token, and the epoch and offset of the
   * last publication it received (what recovery starts from). Confined to the run's event loop.
   */
  public static final class Session {
    final String token;
    final String channel;
    String epoch = "";
    long offset;

    public Session(String token, String channel) {
      this.token = token;
      this.channel = channel;
    }

    public String epoch() {
      return epoch;
    }

    public long offset() {
      return offset;
    }
  }

  /** A connection JWT (HS256) whose {@code channels} claim is {@code channels}. */
  public String connectionToken(String subject, List<String> channels) {
    long now = System.currentTimeMillis();
    return Jwts.builder()
        .subject(subject)
        .issuedAt(new Date(now))
        .expiration(new Date(now + 24 * 3600_000L))
        .claim("channels", channels)
        .signWith(tokenKey, Jwts.SIG.HS256)
        .compact();
  }

  /** The server's port on 127.0.0.1. */
  public int port() {
    return port;
  }

  @Override
  public boolean idIsIndex() {
    return false;
  }

  @Override
  public boolean resumes() {
    return true;
  }

  @Override
  public Object subscriberCredential(Run run) {
    String channel = channel(run.data().runId());
    return new Session(connectionToken("browser-" + run.data().runId(), List.of(channel)), channel);
  }

  /**
   * The uni_sse request for {@code session} (its token, or none when null), recovering from the
   * session's epoch and offset.
   */
  public String subscribeRequest(Session session, String token) {
    ObjectNode connect = JSON.createObjectNode();
    if (token != null) {
      connect.put("token", token);
    }
    connect.putObject("subs").putObject(session.channel)
        .put("recover", true)
        .put("epoch", session.epoch)
        .put("offset", session.offset);
    String json;
    try {
      json = JSON.writeValueAsString(connect);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return "GET /connection/uni_sse?cf_connect=" + URLEncoder.encode(json, StandardCharsets.UTF_8)
        + " HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Accept: text/event-stream\r\n"
        + "\r\n";
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    Session session = (Session) run.credential();
    SseSubscriber.open(shard, run, server, (r, lastEventId) -> subscribeRequest(session, session.token),
        (r, ch, id, data, recvNs) -> {
          if (!read(session, data, PUSH.get(), ch::isOpen, pub -> r.onEvent(ch, null, pub, recvNs))) {
            ch.close();
          }
        });
  }

  /** One publication of a push: its data as sent, and its offset in the channel's stream. */
  record Publication(ByteBuf data, long offset) {}

  /** Returned by {@link #unwrap} for a disconnect push. */
  static final long DISCONNECT = -2;

  /**
   * Reads one push and hands the data of each publication in it to {@code deliver}, in order, while
   * {@code open} says the connection is still wanted (a browser that drops on an event stops there);
   * the session's offset moves past each one delivered, and to the stream's top after a connect push
   * (what it did not recover will not come). Returns false for a disconnect push.
   */
  public static boolean read(Session session, ByteBuf push, byte[][] scratch, BooleanSupplier open,
      Consumer<ByteBuf> deliver) {
    List<Publication> pubs = new ArrayList<>(1);
    long top = unwrap(session, push, scratch, pubs);
    if (top == DISCONNECT) {
      return false;
    }
    for (Publication pub : pubs) {
      if (!open.getAsBoolean()) {
        return true;
      }
      deliver.accept(pub.data());
      session.offset = Math.max(session.offset, pub.offset());
    }
    if (top > session.offset && open.getAsBoolean()) {
      session.offset = top;
    }
    return true;
  }

  /**
   * Parses one push: sets the session's epoch from a connect push and adds its publications (a
   * connect push's recovered ones, or the one of a publication push) to {@code out}. Returns the
   * stream's top offset from a connect push, -1 for other pushes, {@link #DISCONNECT} for a
   * disconnect push.
   */
  static long unwrap(Session session, ByteBuf push, byte[][] scratch, List<Publication> out) {
    int n = push.readableBytes();
    if (scratch[0].length < n) {
      scratch[0] = new byte[Math.max(n, scratch[0].length * 2)];
    }
    byte[] bytes = scratch[0];
    push.getBytes(push.readerIndex(), bytes, 0, n);
    long top = -1;
    try (JsonParser p = FACTORY.createParser(bytes, 0, n)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return top;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        switch (field) {
          case "pub" -> publication(p, bytes, out);
          case "connect" -> top = connect(p, bytes, session, out);
          case "disconnect" -> {
            return DISCONNECT;
          }
          default -> p.skipChildren();
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("not a Centrifugo push: "
          + new String(bytes, 0, Math.min(n, 200), StandardCharsets.UTF_8), e);
    }
    return top;
  }

  /**
   * {@code "connect": {.., "subs": {"<channel>": {"epoch", "offset", "publications": [..]}}}}: the
   * top offset of the session's channel (-1 when not named).
   */
  private static long connect(JsonParser p, byte[] bytes, Session session, List<Publication> out)
      throws IOException {
    long top = -1;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      p.nextToken();
      if (!field.equals("subs")) {
        p.skipChildren();
        continue;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String channel = p.currentName();
        p.nextToken();
        if (!channel.equals(session.channel)) {
          p.skipChildren();
          continue;
        }
        top = 0;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String f = p.currentName();
          p.nextToken();
          switch (f) {
            case "epoch" -> session.epoch = p.getText();
            case "offset" -> top = p.getLongValue();
            case "publications" -> {
              while (p.nextToken() == JsonToken.START_OBJECT) {
                publication(p, bytes, out);
              }
            }
            default -> p.skipChildren();
          }
        }
      }
    }
    return top;
  }

  /** {@code {"data": <raw>, "offset": n, ..}}, the parser on its START_OBJECT. */
  private static void publication(JsonParser p, byte[] bytes, List<Publication> out)
      throws IOException {
    int from = -1;
    int to = -1;
    long offset = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String f = p.currentName();
      p.nextToken();
      switch (f) {
        case "data" -> {
          from = (int) p.currentTokenLocation().getByteOffset();
          p.skipChildren();
          to = (int) p.currentLocation().getByteOffset();
        }
        case "offset" -> offset = p.getLongValue();
        default -> p.skipChildren();
      }
    }
    if (from >= 0) {
      out.add(new Publication(Unpooled.wrappedBuffer(bytes, from, to - from), offset));
    }
  }

  /** The body of the API publish of {@code data} (a JSON value) to {@code channel}, without it. */
  static byte[] publishPrefix(String channel) {
    return ("{\"channel\":\"" + channel + "\",\"data\":").getBytes(StandardCharsets.UTF_8);
  }

  /** The head of an API publish request whose body is {@code bodyLength} bytes. */
  String publishHead(int bodyLength) {
    return "POST /api/publish HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "X-API-Key: " + apiKey + "\r\n"
        + "Content-Type: application/json\r\n"
        + "Content-Length: " + bodyLength + "\r\n\r\n";
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    byte[] prefix = publishPrefix(channel(run.data().runId()));
    return PipelinedPostPublisher.open(shard, run, server, (out, index) -> {
      byte[] event = run.data().event(index);
      out.writeCharSequence(publishHead(prefix.length + event.length + 1), StandardCharsets.US_ASCII);
      out.writeBytes(prefix).writeBytes(event).writeByte('}');
    });
  }
}
