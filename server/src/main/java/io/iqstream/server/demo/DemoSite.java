package io.iqstream.server.demo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.config.DemoSettings;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.DemoRefusal;
import io.iqstream.server.metrics.Metrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demo a newcomer can watch: a chat page at {@code /demo} and its simulated agent.
 *
 * <ul>
 *   <li>{@code GET /demo} — the page (static files from the classpath folder {@code demo/}).
 *   <li>{@code POST /demo/api/runs} — starts a simulated run (optional JSON body or query {@code speed}, 1 =
 *       real time) and, once the relay has accepted the run's first event, answers
 *       {@code 201 {"runId","token","eventsUrl","events","question"}}: the token may subscribe to that run only,
 *       for the page's {@code EventSource(eventsUrl + "?access_token=")}.
 * </ul>
 *
 * <p>The simulated backend ({@link RunSimulator}) publishes through the normal publish API at
 * {@code selfBaseUri}, with {@code publishToken}, exactly as a real backend does; the page reads through
 * the normal subscribe API. Nothing here touches the relay's internals.
 *
 * <p>Limits: {@code POST /demo/api/runs} needs no token, so its runs have their own {@link DemoQuota}
 * ({@code --demo-max-runs} held at once, a share of the memory budget, {@code --demo-rate} starts a minute) and
 * are deleted {@code --demo-retention} after they end. Beyond the quota a start is answered {@code 429} with
 * {@code Retry-After}; when the relay refuses the first event, {@code 503}. Every refusal is counted in
 * {@code iqstream_demo_refusals_total}, none is logged.
 *
 * <p>Thread: {@link #handle} is called on an event loop and never blocks (the files are read once, at
 * construction; a run is only scheduled); the future it returns completes on an HTTP client thread. It does not
 * release the request.
 */
public final class DemoSite implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DemoSite.class);

    /** What a demo run reserves against the demo's share, per byte it publishes (frames, index, segment slack). */
    static final int RESERVE_FACTOR = 2;
    static final double MIN_SPEED = 0.1;
    static final double MAX_SPEED = 1000;

    private static final String PREFIX = "/demo";
    private static final String RUNS_PATH = "/demo/api/runs";
    private static final String PAGE_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final Map<String, String> ASSET_TYPES = Map.of(
            "index.html", "text/html; charset=utf-8",
            "demo.js", "text/javascript; charset=utf-8",
            "demo.css", "text/css; charset=utf-8");

    private final Function<String, String> subscribeTokenForRun;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, byte[]> assets;
    private final RunSimulator simulator;
    private final DemoQuota quota;
    private final Metrics metrics;

    /**
     * @param settings the demo's quota, rate and retention
     * @param budgetBytes the relay's memory budget, of which demo runs may reserve
     *     {@link DemoSettings#BUDGET_SHARE_DIVISOR 1/8}
     */
    public DemoSite(URI selfBaseUri, Function<String, String> subscribeTokenForRun, String publishToken,
            DemoSettings settings, long budgetBytes, Metrics metrics) {
        this.subscribeTokenForRun = subscribeTokenForRun;
        this.assets = loadAssets();
        this.metrics = metrics;
        this.quota = new DemoQuota(settings.maxRuns(), Math.max(1, budgetBytes / DemoSettings.BUDGET_SHARE_DIVISOR),
                settings.ratePerMinute(), DemoSettings.BURST_RUNS, System::nanoTime);
        this.simulator = new RunSimulator(selfBaseUri, publishToken, settings.retentionMs(), metrics);
    }

    /**
     * The demo of a server listening on {@code port}: it publishes to itself there, with tokens minted from
     * {@code --jwt-secret} (dev mode's included); null, with a warning, when there is no secret to mint them.
     */
    public static DemoSite forServer(ServerConfig config, int port, long budgetBytes, Metrics metrics) {
        if (config.jwtSecret() == null && config.authEnabled()) {
            log.warn("--demo needs --jwt-secret (or dev mode) to mint its tokens; demo off");
            return null;
        }
        String host = config.host().equals("0.0.0.0") || config.host().equals("::") ? "127.0.0.1" : config.host();
        URI self = URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port);
        TokenMinter minter = config.authEnabled() ? new TokenMinter(config.jwtSecret()) : null;
        String publishToken = minter == null ? "" : minter.mint(List.of("demo-*"), List.of(), Duration.ofDays(365));
        return new DemoSite(self, runId -> minter == null ? "" : minter.mint(List.of(), List.of(runId),
                Duration.ofHours(1)), publishToken, config.demo(), budgetBytes, metrics);
    }

    /**
     * Answers a request under {@code /demo}: at once for the page, once the run is created (or refused) for a
     * start; null when the path is not the demo's.
     */
    public CompletableFuture<FullHttpResponse> handle(FullHttpRequest request) {
        String path = new QueryStringDecoder(request.uri()).path();
        if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
            return null;
        }
        if (path.equals(RUNS_PATH)) {
            if (!request.method().equals(HttpMethod.POST)) {
                return CompletableFuture.completedFuture(methodNotAllowed(request, "POST"));
            }
            return startRun(request);
        }
        String name = path.equals(PREFIX) || path.equals(PREFIX + "/") ? "index.html" : path.substring(PREFIX.length() + 1);
        byte[] asset = assets.get(name);
        if (asset == null) {
            return null;
        }
        HttpVersion version = request.protocolVersion();
        boolean head = request.method().equals(HttpMethod.HEAD);
        if (!head && !request.method().equals(HttpMethod.GET)) {
            return CompletableFuture.completedFuture(methodNotAllowed(request, "GET, HEAD"));
        }
        FullHttpResponse response = response(version, HttpResponseStatus.OK,
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(asset), ASSET_TYPES.get(name));
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, asset.length);
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        if (name.endsWith(".html")) {
            response.headers().set("Content-Security-Policy", PAGE_SECURITY_POLICY);
        }
        return CompletableFuture.completedFuture(response);
    }

    private CompletableFuture<FullHttpResponse> startRun(FullHttpRequest request) {
        HttpVersion version = request.protocolVersion(); // the future may complete after the request is released
        double speed;
        try {
            speed = speed(request);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(error(version, HttpResponseStatus.BAD_REQUEST, "bad_request",
                    e.getMessage()));
        }
        String runId = "demo-" + UUID.randomUUID();
        DemoScript script = DemoScript.forRun(runId, json);
        long reserved = script.publishedBytes() * RESERVE_FACTOR;
        DemoQuota.Refusal refusal = quota.tryAdmit(reserved);
        if (refusal != null) {
            return CompletableFuture.completedFuture(refused(version, refusal));
        }
        metrics.demoRunsHeld.increment();
        metrics.demoBytesHeld.add(reserved);
        Runnable gone = () -> {
            quota.release(reserved);
            metrics.demoRunsHeld.decrement();
            metrics.demoBytesHeld.add(-reserved);
        };
        String token = subscribeTokenForRun.apply(runId);
        return simulator.start(runId, script, speed, gone).thenApply(outcome -> switch (outcome.kind()) {
            case CREATED -> {
                ObjectNode body = json.createObjectNode()
                        .put("runId", runId)
                        .put("token", token)
                        .put("eventsUrl", "/v1/runs/" + runId + "/events")
                        .put("events", script.steps().size())
                        .put("speed", speed)
                        .put("question", DemoScript.QUESTION);
                FullHttpResponse response = json(version, HttpResponseStatus.CREATED, body);
                response.headers().set(HttpHeaderNames.LOCATION, "/v1/runs/" + runId);
                yield response;
            }
            case REFUSED -> notCreated(version, outcome);
            case CLOSED -> {
                metrics.demoRefused(DemoRefusal.DRAINING);
                yield unavailable(version, "draining", "the demo is shutting down", 5);
            }
        });
    }

    /** A start refused by the demo's own quota: 429 with Retry-After. */
    private FullHttpResponse refused(HttpVersion version, DemoQuota.Refusal refusal) {
        FullHttpResponse response;
        long retryAfterSeconds;
        switch (refusal) {
            case RATE_LIMITED -> {
                metrics.demoRefused(DemoRefusal.RATE_LIMITED);
                retryAfterSeconds = quota.secondsUntilNextToken();
                response = error(version, HttpResponseStatus.TOO_MANY_REQUESTS, "rate_limited",
                        "demo runs are started at most " + DemoSettings.BURST_RUNS + " at once and then at the"
                        + " --demo-rate; try again in " + retryAfterSeconds + " s");
            }
            case RUNS_FULL -> {
                metrics.demoRefused(DemoRefusal.MAX_RUNS);
                retryAfterSeconds = 5;
                response = error(version, HttpResponseStatus.TOO_MANY_REQUESTS, "demo_quota",
                        "the demo holds its most runs at once (" + quota.maxRuns() + ", --demo-max-runs); try again"
                        + " in a few seconds");
            }
            default -> {
                metrics.demoRefused(DemoRefusal.MEMORY_SHARE);
                retryAfterSeconds = 5;
                response = error(version, HttpResponseStatus.TOO_MANY_REQUESTS, "demo_quota",
                        "demo runs hold their share of the memory budget (" + (quota.maxBytes() >> 10) + " KiB);"
                        + " try again in a few seconds");
            }
        }
        response.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(retryAfterSeconds));
        return response;
    }

    /** The relay refused (or could not be asked for) the run's first event: 503, never 201. */
    private FullHttpResponse notCreated(HttpVersion version, RunSimulator.Outcome outcome) {
        String code = "";
        try {
            JsonNode body = outcome.status() == 0 ? null : json.readTree(outcome.detail());
            code = body != null && body.hasNonNull("error") ? body.get("error").asText() : "";
        } catch (JsonProcessingException e) {
            // not the relay's JSON error: a publish failure like any other
        }
        if (code.equals("over_budget")) {
            metrics.demoRefused(DemoRefusal.OVER_BUDGET);
            return unavailable(version, "over_budget", "the relay's memory budget cannot take another run now", 1);
        }
        if (code.equals("draining")) {
            metrics.demoRefused(DemoRefusal.DRAINING);
            return unavailable(version, "draining", "the server is shutting down", 5);
        }
        metrics.demoRefused(DemoRefusal.PUBLISH_FAILED);
        return unavailable(version, "publish_failed", "the demo's run was not created (the relay answered "
                + (outcome.status() == 0 ? "nothing" : "HTTP " + outcome.status() + (code.isEmpty() ? "" : " " + code))
                + ")", 5);
    }

    private FullHttpResponse unavailable(HttpVersion version, String code, String message, int retryAfterSeconds) {
        FullHttpResponse response = error(version, HttpResponseStatus.SERVICE_UNAVAILABLE, code, message);
        response.headers().set(HttpHeaderNames.RETRY_AFTER, Integer.toString(retryAfterSeconds));
        return response;
    }

    /** The playback speed from {@code ?speed=} or a JSON body {@code {"speed":N}}; 1 when neither. */
    private double speed(FullHttpRequest request) {
        List<String> fromQuery = new QueryStringDecoder(request.uri()).parameters().get("speed");
        String text = fromQuery == null || fromQuery.isEmpty() ? null : fromQuery.get(0);
        ByteBuf content = request.content();
        if (text == null && content.isReadable()) {
            JsonNode body;
            try {
                body = json.readTree(content.toString(StandardCharsets.UTF_8));
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException("the body is not JSON: " + e.getOriginalMessage());
            }
            if (body != null && body.has("speed")) {
                JsonNode node = body.get("speed");
                if (!node.isNumber()) {
                    throw new IllegalArgumentException("speed must be a number");
                }
                text = node.asText();
            }
        }
        if (text == null) {
            return 1;
        }
        double speed;
        try {
            speed = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("speed must be a number, got '" + text + "'");
        }
        if (!(speed >= MIN_SPEED && speed <= MAX_SPEED)) {
            throw new IllegalArgumentException("speed must be between " + MIN_SPEED + " and " + MAX_SPEED);
        }
        return speed;
    }

    private FullHttpResponse methodNotAllowed(FullHttpRequest request, String allow) {
        HttpVersion version = request.protocolVersion();
        FullHttpResponse response = error(version, HttpResponseStatus.METHOD_NOT_ALLOWED, "bad_request",
                request.method() + " is not allowed here; use " + allow);
        response.headers().set(HttpHeaderNames.ALLOW, allow);
        return response;
    }

    private FullHttpResponse error(HttpVersion version, HttpResponseStatus status, String code, String message) {
        return json(version, status, json.createObjectNode().put("error", code).put("message", message));
    }

    private FullHttpResponse json(HttpVersion version, HttpResponseStatus status, ObjectNode body) {
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = response(version, status, Unpooled.wrappedBuffer(bytes), "application/json");
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        return response;
    }

    private static FullHttpResponse response(HttpVersion version, HttpResponseStatus status, ByteBuf content, String type) {
        FullHttpResponse response = new DefaultFullHttpResponse(version == null ? HttpVersion.HTTP_1_1 : version,
                status, content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        response.headers().set("X-Content-Type-Options", "nosniff");
        response.headers().set("Referrer-Policy", "no-referrer");
        return response;
    }

    private static Map<String, byte[]> loadAssets() {
        Map<String, byte[]> loaded = new HashMap<>();
        for (String name : ASSET_TYPES.keySet()) {
            try (InputStream in = DemoSite.class.getResourceAsStream("/demo/" + name)) {
                if (in == null) {
                    log.warn("demo asset /demo/{} is missing from the classpath; it will answer 404", name);
                    continue;
                }
                loaded.put(name, in.readAllBytes());
            } catch (IOException e) {
                log.warn("demo asset /demo/{} could not be read: {}", name, e.toString());
            }
        }
        return Map.copyOf(loaded);
    }

    /** Simulated runs playing now. */
    int activeRuns() {
        return simulator.activeRuns();
    }

    /** Demo runs held now (playing, or ended and not yet deleted). */
    int runsHeld() {
        return quota.runsHeld();
    }

    @Override
    public void close() {
        simulator.close();
    }
}
