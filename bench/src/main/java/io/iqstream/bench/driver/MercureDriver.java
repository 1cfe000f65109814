package io.iqstream.bench.driver;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Keys;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKey;

/**
 * The Mercure protocol (v0.24). Each run is a topic, {@code urn:iqstream:run:<run id>}. Its backend
 * publishes every event as one form POST to {@code /.well-known/mercure} ({@code topic}, {@code id},
 * {@code private=on}, {@code data}: Mercure takes one update per request) with a publisher JWT, on the
 * run's keep-alive connection ({@link PipelinedPostPublisher}). Each browser is an EventSource on
 * {@code GET /.well-known/mercure?topic=<topic>} with its own subscriber JWT whose
 * {@code mercure.subscribe} names its run's topic only (the updates are private: no token, or a token
 * for another topic, gets nothing), and resumes with Last-Event-ID. The ids are the bench's own
 * ({@code <run id>-<n>}, n = 1..429), but the checker identifies events by payload, as for any peer.
 * With {@code transport local} Mercure keeps no history ({@link #replays()} false: what a browser misses
 * while away is lost); with {@code transport bolt} it replays from its history.
 */
public final class MercureDriver implements Driver {
  /** The topic of every run: this prefix and the run's id. */
  public static final String TOPIC_PREFIX = "urn:iqstream:run:";

  private final SocketAddress server;
  private final String hostHeader;
  private final SecretKey subscriberKey;
  private final String publisherToken;
  private final boolean history;
  private final int port;

  /**
   * @param history whether the hub keeps a history (bolt) that Last-Event-ID resumes from
   */
  public MercureDriver(String host, int port, String publisherSecret, String subscriberSecret,
      boolean history) {
    this.server = new InetSocketAddress(host, port);
    this.port = port;
    this.hostHeader = host + ":" + port;
    this.subscriberKey = Keys.hmacShaKeyFor(subscriberSecret.getBytes(StandardCharsets.UTF_8));
    this.history = history;
    this.publisherToken = token(Keys.hmacShaKeyFor(publisherSecret.getBytes(StandardCharsets.UTF_8)),
        "bench-backend", Map.of("publish", List.of("*")));
  }

  /** An HS256 JWT with the {@code mercure} claim {@code rights}. */
  static String token(SecretKey key, String subject, Map<String, List<String>> rights) {
    long now = System.currentTimeMillis();
    return Jwts.builder()
        .subject(subject)
        .issuedAt(new Date(now))
        .expiration(new Date(now + 24 * 3600_000L))
        .claim("mercure", rights)
        .signWith(key, Jwts.SIG.HS256)
        .compact();
  }

  /** A subscriber JWT allowing {@code topic} only. */
  public String subscriberToken(String topic) {
    return token(subscriberKey, "browser", Map.of("subscribe", List.of(topic)));
  }

  /** The publisher JWT (publish to any topic). */
  public String publisherToken() {
    return publisherToken;
  }

  /** The server's port on 127.0.0.1. */
  public int port() {
    return port;
  }

  @Override
  public boolean idIsIndex() {
    return false;
  }

  /** Browsers drop and reconnect with Last-Event-ID, with either transport. */
  @Override
  public boolean resumes() {
    return true;
  }

  /** Only the bolt transport sends what a reconnecting browser missed. */
  @Override
  public boolean replays() {
    return history;
  }

  @Override
  public Object subscriberCredential(Run run) {
    return subscriberToken(TOPIC_PREFIX + run.data().runId());
  }

  /** The subscribe request: {@code token} null sends none; {@code lastEventId} null: a first connection. */
  public String subscribeRequest(String topic, String token, String lastEventId) {
    return "GET /.well-known/mercure?topic=" + URLEncoder.encode(topic, StandardCharsets.UTF_8)
        + " HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Accept: text/event-stream\r\n"
        + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
        + (lastEventId == null ? "" : "Last-Event-ID: " + lastEventId + "\r\n")
        + "\r\n";
  }

  /** The form body that publishes {@code data} as update {@code id} of {@code topic}, private. */
  public static String publishBody(String topic, String id, byte[] data) {
    return "topic=" + URLEncoder.encode(topic, StandardCharsets.UTF_8)
        + "&id=" + URLEncoder.encode(id, StandardCharsets.UTF_8)
        + "&private=on&data=" + URLEncoder.encode(new String(data, StandardCharsets.UTF_8),
            StandardCharsets.UTF_8);
  }

  /** The whole publish request for {@code body}, with the publisher JWT. */
  public String publishRequest(String body) {
    return "POST /.well-known/mercure HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Authorization: Bearer " + publisherToken + "\r\n"
        + "Content-Type: application/x-www-form-urlencoded\r\n"
        + "Content-Length: " + body.length() + "\r\n\r\n" + body;
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    String topic = TOPIC_PREFIX + run.data().runId();
    SseSubscriber.open(shard, run, server,
        (r, lastEventId) -> subscribeRequest(topic, (String) r.credential(), lastEventId));
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    String runId = run.data().runId();
    String topic = TOPIC_PREFIX + runId;
    return PipelinedPostPublisher.open(shard, run, server, (out, index) -> out.writeCharSequence(
        publishRequest(publishBody(topic, runId + "-" + (index + 1), run.data().event(index))),
        StandardCharsets.US_ASCII));
  }
}
