package io.iqstream.bench.driver;

import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.Publisher;
import io.iqstream.bench.load.Run;
import io.iqstream.bench.load.Shard;
import io.iqstream.bench.workload.RunScript;
import io.jsonwebtoken.security.Keys;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKey;

/**
 * The Durable Streams protocol (PROTOCOL.md "Version 1.0"), as its own clients use it: each run is a JSON stream,
 * {@code /v1/stream/runs/<run id>}. Its backend creates it ({@code PUT}, {@code Content-Type: application/json})
 * and appends every event as one {@code POST} (one JSON message per request, as the protocol's
 * {@code DurableStream.append} sends it) on the run's keep-alive connection, pipelined; the last event's POST
 * carries {@code Stream-Closed: true} (final append and close in one request). Each browser reads
 * {@code GET ...?offset=-1&live=sse} once the stream exists ({@link RunStream}), and resumes with
 * {@code offset=<the streamNextOffset of the last control event it saw>} ({@link DurableStreamsSseSink}). Every
 * server of the protocol is driven by this one driver: IQ-Stream's endpoint (with a JWT per run in
 * {@code Authorization}: publish for the backend, subscribe on the run's stream path only for its browser),
 * Electric's Rust server and the Node reference server (no auth: they check none). The checker identifies events
 * by payload ({@link #idIsIndex()} false): the protocol's offsets are opaque.
 */
public final class DurableStreamsDriver implements Driver {
  /** Where every run's stream lives: this prefix and the run's id. */
  public static final String PATH_PREFIX = "/v1/stream/runs/";

  private final SocketAddress server;
  private final int port;
  private final String hostHeader;
  private final SecretKey key;
  private final String publisherToken;

  /**
   * @param jwtSecret IQ-Stream's {@code --jwt-secret} (tokens sent on every request); null: a server without auth
   */
  public DurableStreamsDriver(String host, int port, String jwtSecret) {
    this.server = new InetSocketAddress(host, port);
    this.port = port;
    this.hostHeader = host + ":" + port;
    this.key = jwtSecret == null ? null : Keys.hmacShaKeyFor(jwtSecret.getBytes(StandardCharsets.UTF_8));
    this.publisherToken = key == null ? null : token(Map.of("publish", List.of(PATH_PREFIX.substring(
        "/v1/stream/".length()) + "*")), "bench-backend");
  }

  private String token(Map<String, List<String>> rights, String subject) {
    return IqStreamDriver.token(key, rights, subject);
  }

  /** The server's port. */
  public int port() {
    return port;
  }

  /** The stream's path, as the JWT's patterns name it (without {@code /v1/stream/}). */
  static String streamPath(String runId) {
    return "runs/" + runId;
  }

  /** A subscriber JWT allowing {@code subscribe} on {@code runId}'s stream only; null without auth. */
  public String subscriberToken(String runId) {
    return key == null ? null : token(Map.of("subscribe", List.of(streamPath(runId))), "browser-" + runId);
  }

  @Override
  public boolean idIsIndex() {
    return false;
  }

  @Override
  public boolean resumes() {
    return true;
  }

  /** The run's stream: its browser's token and whether the stream exists yet. */
  @Override
  public Object subscriberCredential(Run run) {
    return new RunStream(subscriberToken(run.data().runId()));
  }

  /** The create request: a JSON stream. */
  public String createRequest(String runId) {
    return "PUT " + PATH_PREFIX + runId + " HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + auth(publisherToken)
        + "Content-Type: application/json\r\n"
        + "Content-Length: 0\r\n\r\n";
  }

  /** The head of the append of {@code bodyLength} bytes; {@code close} also closes the stream. */
  public String appendHead(String runId, int bodyLength, boolean close) {
    return "POST " + PATH_PREFIX + runId + " HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + auth(publisherToken)
        + "Content-Type: application/json\r\n"
        + (close ? "Stream-Closed: true\r\n" : "")
        + "Content-Length: " + bodyLength + "\r\n\r\n";
  }

  /** The live SSE read from {@code offset} ({@code -1}: the start), with {@code token} (null: none). */
  public String readRequest(String runId, String offset, String token) {
    return "GET " + PATH_PREFIX + runId + "?offset=" + URLEncoder.encode(offset, StandardCharsets.UTF_8)
        + "&live=sse HTTP/1.1\r\n"
        + "Host: " + hostHeader + "\r\n"
        + "Accept: text/event-stream\r\n"
        + auth(token)
        + "\r\n";
  }

  private static String auth(String token) {
    return token == null ? "" : "Authorization: Bearer " + token + "\r\n";
  }

  @Override
  public void openSubscriber(Shard shard, Run run) {
    RunStream stream = (RunStream) run.credential();
    if (!stream.created) {
      stream.subscribeWhenCreated = true; // the browser is handed the stream's URL once it exists
      return;
    }
    SseSubscriber.open(shard, run, server,
        (r, offset) -> readRequest(r.data().runId(), offset == null ? "-1" : offset, stream.token),
        new DurableStreamsSseSink());
  }

  @Override
  public Publisher openPublisher(Shard shard, Run run) {
    String runId = run.data().runId();
    RunStream stream = (RunStream) run.credential();
    return PipelinedPostPublisher.open(shard, run, server,
        out -> out.writeCharSequence(createRequest(runId), StandardCharsets.US_ASCII),
        () -> {
          stream.created = true;
          if (stream.subscribeWhenCreated) {
            stream.subscribeWhenCreated = false;
            openSubscriber(shard, run);
          }
        },
        (out, index) -> {
          byte[] event = run.data().event(index);
          out.writeCharSequence(appendHead(runId, event.length, index == RunScript.EVENTS - 1),
              StandardCharsets.US_ASCII);
          out.writeBytes(event);
        },
        status -> status == 200 || status == 201 || status == 204);
  }

  /** One run's stream as its browser knows it. Confined to the run's event loop. */
  static final class RunStream {
    final String token;
    boolean created;
    boolean subscribeWhenCreated;

    RunStream(String token) {
      this.token = token;
    }
  }
}
