package io.iqstream.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * A client for publishing AG-UI runs into IQ-Stream from a JVM backend.
 *
 * <pre>{@code
 * IqStreamClient iq = IqStreamClient.builder(URI.create("http://relay:8080"))
 *     .token(publishToken)            // a JWT with {"iqstream":{"publish":["*"]}}
 *     .build();
 * try (RunPublisher run = iq.openRun("chat-42")) {
 *   run.send(AgUiEvents.runStarted(threadId, "chat-42"));
 *   run.send("{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m1\",\"role\":\"assistant\"}");
 *   ...
 *   run.send(AgUiEvents.runFinished(threadId, "chat-42"));
 * }                                   // close() ends the request and waits for the reply
 * }</pre>
 *
 * <p>Thread model: the client is immutable and safe to share; each {@link RunPublisher} is for
 * one run and serialises its callers. Configuration is validated once, in {@link Builder#build}.
 */
public final class IqStreamClient {
  /** The run ids the server accepts: 1-128 characters of {@code [A-Za-z0-9._~:-]}. */
  public static final Pattern RUN_ID = Pattern.compile("[A-Za-z0-9._~:-]{1,128}");

  private final URI baseUri;
  private final HttpClient http;
  private final Supplier<String> token;
  private final ObjectMapper mapper;
  private final RetryPolicy retry;
  private final Duration requestTimeout;
  private final long restoreBufferBytes;

  private IqStreamClient(Builder b) {
    String base = b.baseUri.toString();
    this.baseUri = URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
    this.http = b.httpClient != null
        ? b.httpClient
        : HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(b.connectTimeout)
            .build();
    this.token = b.token;
    this.mapper = b.mapper != null ? b.mapper : new ObjectMapper();
    this.retry = new RetryPolicy(b.maxRetries, b.retryInitialDelay, b.retryMaxDelay);
    this.requestTimeout = b.requestTimeout;
    this.restoreBufferBytes = b.restoreBufferBytes;
  }

  /** The most bytes of event lines a publisher keeps to restore its run ({@link Builder#restoreBuffer}). */
  long restoreBufferBytes() {
    return restoreBufferBytes;
  }

  /** Starts configuring a client for the server at {@code baseUri} (e.g. http://relay:8080). */
  public static Builder builder(URI baseUri) {
    return new Builder(baseUri);
  }

  /**
   * Opens a streamed publish of {@code runId}: one HTTP request whose body carries each event
   * the moment it is sent. The run is created by its first event, or continued if it exists.
   *
   * @throws IqStreamHttpException if the run has already ended (409 run_ended) or the token is
   *     refused
   */
  public RunPublisher openRun(String runId) {
    return new RunPublisher(this, checkRunId(runId));
  }

  /**
   * Publishes a batch of events in one request (not streamed) and returns the server's reply.
   * Events are JSON strings or objects Jackson can write.
   */
  public PublishResult publish(String runId, List<?> events) {
    checkRunId(runId);
    StringBuilder body = new StringBuilder();
    for (Object event : events) {
      body.append(new String(eventLine(event), StandardCharsets.UTF_8));
    }
    HttpRequest request = request(eventsUri(runId))
        .header("Content-Type", "application/x-ndjson")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8))
        .build();
    HttpResponse<String> response = send(request, runId);
    if (response.statusCode() != 200) throw httpError(runId, response);
    return parseResult(runId, response.body());
  }

  /** {@code GET /v1/runs/{runId}}: the run's status, or empty if the server has no such run (404). */
  public java.util.Optional<RunStatus> status(String runId) {
    checkRunId(runId);
    HttpRequest request = request(runUri(runId)).GET().build();
    HttpResponse<String> response = send(request, runId);
    if (response.statusCode() == 404) return java.util.Optional.empty();
    if (response.statusCode() != 200) throw httpError(runId, response);
    try {
      JsonNode n = mapper.readTree(response.body());
      return java.util.Optional.of(new RunStatus(
          n.path("runId").asText(runId),
          n.path("events").asLong(),
          n.path("bytes").asLong(),
          n.path("ended").asBoolean(),
          n.path("subscribers").asInt(),
          n.path("ageMs").asLong(),
          n.path("publishing").asBoolean(false)));
    } catch (IOException e) {
      throw new IqStreamException("unreadable status reply: " + response.body(), runId, e);
    }
  }

  /**
   * {@code DELETE /v1/runs/{runId}}: a running run is stopped (its readers get {@code RUN_ERROR} {@code STOPPED}, its
   * open publisher a {@link RunStoppedException}; the run stays readable for the server's retention); an ended run
   * is dropped now.
   */
  public void delete(String runId) {
    checkRunId(runId);
    HttpResponse<String> response = send(request(runUri(runId)).DELETE().build(), runId);
    if (response.statusCode() != 204 && response.statusCode() != 200) throw httpError(runId, response);
  }

  // ---- shared with RunPublisher ----

  /**
   * Whether the ended run {@code runId}, holding {@code events} events, was ended by a stop: its last
   * event is {@code RUN_ERROR} with code {@code STOPPED}. One {@code GET .../events} from the last id.
   */
  boolean endedByStop(String runId, long events) {
    if (events < 1) return false;
    HttpRequest request = request(eventsUri(runId))
        .header("Accept", "text/event-stream")
        .header("Last-Event-ID", Long.toString(events - 1))
        .GET()
        .build();
    HttpResponse<String> response = send(request, runId);
    if (response.statusCode() != 200) return false;
    for (String line : response.body().split("\n")) {
      if (!line.startsWith("data:")) continue;
      try {
        JsonNode n = mapper.readTree(line.substring(5).trim());
        return n != null && "RUN_ERROR".equals(n.path("type").asText()) && "STOPPED".equals(n.path("code").asText());
      } catch (IOException e) {
        return false;
      }
    }
    return false;
  }

  HttpClient http() {
    return http;
  }

  RetryPolicy retry() {
    return retry;
  }

  URI eventsUri(String runId) {
    return URI.create(baseUri + "/v1/runs/" + runId + "/events");
  }

  private URI runUri(String runId) {
    return URI.create(baseUri + "/v1/runs/" + runId);
  }

  /** A request builder with the Authorization header, if a token is configured. */
  HttpRequest.Builder request(URI uri) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri);
    String t = token == null ? null : token.get();
    if (t != null && !t.isEmpty()) b.header("Authorization", "Bearer " + t);
    return b;
  }

  private HttpResponse<String> send(HttpRequest request, String runId) {
    HttpRequest timed = HttpRequest.newBuilder(request, (k, v) -> true).timeout(requestTimeout).build();
    try {
      return http.send(timed, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IqStreamException("request to IQ-Stream failed: " + e, runId, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IqStreamException("interrupted", runId, e);
    }
  }

  /**
   * One event as an NDJSON line: a JSON object on one line, then '\n'. Strings are taken as JSON
   * text (re-written compactly if they span lines); anything else is written by Jackson.
   */
  byte[] eventLine(Object event) {
    Objects.requireNonNull(event, "event");
    String json;
    try {
      if (event instanceof CharSequence cs) {
        json = cs.toString().strip();
        if (json.indexOf('\n') >= 0 || json.indexOf('\r') >= 0) {
          json = mapper.writeValueAsString(mapper.readTree(json));
        }
      } else if (event instanceof byte[] bytes) {
        return eventLine(new String(bytes, StandardCharsets.UTF_8));
      } else {
        json = mapper.writeValueAsString(event);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("not a JSON event: " + e.getMessage(), e);
    }
    if (json.isEmpty() || json.charAt(0) != '{') {
      throw new IllegalArgumentException("an event must be a JSON object, got: " + abbreviate(json));
    }
    return (json + "\n").getBytes(StandardCharsets.UTF_8);
  }

  PublishResult parseResult(String runId, String body) {
    try {
      JsonNode n = mapper.readTree(body);
      return new PublishResult(n.path("runId").asText(runId), n.path("lastEventId").asLong(), n.path("ended").asBoolean());
    } catch (IOException e) {
      throw new IqStreamException("unreadable publish reply: " + abbreviate(body), runId, e);
    }
  }

  IqStreamHttpException httpError(String runId, HttpResponse<String> response) {
    String code = null;
    String message = null;
    long position = 0;
    long lastEventId = -1;
    try {
      JsonNode n = mapper.readTree(response.body());
      if (n != null && n.isObject()) {
        code = n.hasNonNull("error") ? n.get("error").asText() : null;
        message = n.hasNonNull("message") ? n.get("message").asText() : null;
        position = n.path("position").asLong(0);
        lastEventId = n.path("lastEventId").asLong(-1);
      }
    } catch (IOException | RuntimeException e) {
      message = abbreviate(response.body());
    }
    Duration retryAfter = response.headers().firstValue("Retry-After").map(IqStreamClient::parseRetryAfter).orElse(null);
    if (response.statusCode() == 409 && RunStoppedException.CODE.equals(code)) {
      return new RunStoppedException(runId, message, position, lastEventId);
    }
    return new IqStreamHttpException(runId, response.statusCode(), code, message, position, lastEventId, retryAfter);
  }

  private static Duration parseRetryAfter(String value) {
    try {
      return Duration.ofSeconds(Long.parseLong(value.trim()));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static String checkRunId(String runId) {
    if (runId == null || !RUN_ID.matcher(runId).matches()) {
      throw new IllegalArgumentException("a run id is 1-128 characters of [A-Za-z0-9._~:-], got: " + runId);
    }
    return runId;
  }

  private static String abbreviate(String s) {
    if (s == null) return "null";
    return s.length() <= 120 ? s : s.substring(0, 120) + "...";
  }

  /** How a broken publish is retried: attempts in a row, and the doubling delay between them. */
  record RetryPolicy(int maxRetries, Duration initialDelay, Duration maxDelay) {
    Duration delay(int attempt) {
      long ms = initialDelay.toMillis() << Math.min(20, Math.max(0, attempt - 1));
      return Duration.ofMillis(Math.min(ms, maxDelay.toMillis()));
    }
  }

  /** Configuration, validated once by {@link #build()}. */
  public static final class Builder {
    private final URI baseUri;
    private Supplier<String> token;
    private HttpClient httpClient;
    private ObjectMapper mapper;
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofSeconds(30);
    private int maxRetries = 5;
    private Duration retryInitialDelay = Duration.ofMillis(200);
    private Duration retryMaxDelay = Duration.ofSeconds(5);
    private long restoreBufferBytes = 8L << 20;

    private Builder(URI baseUri) {
      this.baseUri = Objects.requireNonNull(baseUri, "baseUri");
    }

    /** A JWT with the publish right, sent as {@code Authorization: Bearer}. */
    public Builder token(String jwt) {
      this.token = jwt == null ? null : () -> jwt;
      return this;
    }

    /** Asked for a token before every request (for tokens that are rotated). */
    public Builder token(Supplier<String> jwtSupplier) {
      this.token = jwtSupplier;
      return this;
    }

    /** The HTTP client to use; it should speak HTTP/1.1 (default: a new one). */
    public Builder httpClient(HttpClient client) {
      this.httpClient = client;
      return this;
    }

    /** The Jackson mapper that writes event objects (default: a plain ObjectMapper). */
    public Builder objectMapper(ObjectMapper objectMapper) {
      this.mapper = objectMapper;
      return this;
    }

    /** Connect timeout of the default HTTP client (default 10 s). */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = timeout;
      return this;
    }

    /** Timeout of short requests (status, batch publish, delete; default 30 s). */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = timeout;
      return this;
    }

    /**
     * How often a broken streamed publish is continued over a new request before giving up
     * (default 5 attempts in a row), and the doubling delay between attempts (default 200 ms up
     * to 5 s). Keep the total under the server's --publisher-timeout (30 s), after which the
     * server ends the run with RUN_ERROR PUBLISHER_LOST.
     */
    public Builder retry(int maxRetries, Duration initialDelay, Duration maxDelay) {
      this.maxRetries = maxRetries;
      this.retryInitialDelay = initialDelay;
      this.retryMaxDelay = maxDelay;
      return this;
    }

    /**
     * The most bytes of event lines a streamed publisher keeps so that it can restore its run if the
     * node holding it dies (default 8 MiB per run; a run is typically tens of KiB). The events of a
     * run are kept from its first event until the run ends; past this cap they are dropped and a
     * lost node ends the run as before (409 {@code run_lost}). 0 turns restores off.
     */
    public Builder restoreBuffer(long maxBytes) {
      this.restoreBufferBytes = maxBytes;
      return this;
    }

    public IqStreamClient build() {
      String scheme = baseUri.getScheme();
      if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
        throw new IllegalArgumentException("baseUri must be http or https: " + baseUri);
      }
      if (maxRetries < 0) throw new IllegalArgumentException("maxRetries < 0");
      if (restoreBufferBytes < 0) throw new IllegalArgumentException("restoreBuffer < 0");
      for (Duration d : new Duration[] {connectTimeout, requestTimeout, retryInitialDelay, retryMaxDelay}) {
        if (d == null || d.isNegative()) throw new IllegalArgumentException("durations must be >= 0");
      }
      return new IqStreamClient(this);
    }
  }
}
