package io.iqstream.server.demo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demo a newcomer can watch: a chat page at {@code /demo} and its simulated agent.
 *
 * <ul>
 *   <li>{@code GET /demo} — the page (static files from the classpath folder {@code demo/}).
 *   <li>{@code POST /demo/api/runs} — starts a simulated run (optional JSON body or query {@code speed}, 1 =
 *       real time) and answers {@code 201 {"runId","token","eventsUrl","events","question"}}: the token
 *       may subscribe to that run only, for the page's {@code EventSource(eventsUrl + "?access_token=")}.
 * </ul>
 *
 * <p>The simulated backend ({@link RunSimulator}) publishes through the normal publish API at
 * {@code selfBaseUri}, with {@code publishToken}, exactly as a real backend does; the page reads through
 * the normal subscribe API. Nothing here touches the relay's internals.
 *
 * <p>Thread: {@link #handle} is called on an event loop and never blocks (the files are read once, at
 * construction; a run is only scheduled). It does not release the request. At most
 * {@value #MAX_ACTIVE_RUNS} simulated runs play at once; beyond that a start answers 503 with
 * {@code Retry-After}.
 */
public final class DemoSite implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DemoSite.class);

    static final int MAX_ACTIVE_RUNS = 32;
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

    public DemoSite(URI selfBaseUri, Function<String, String> subscribeTokenForRun, String publishToken) {
        this.subscribeTokenForRun = subscribeTokenForRun;
        this.assets = loadAssets();
        this.simulator = new RunSimulator(selfBaseUri, publishToken, MAX_ACTIVE_RUNS);
    }

    /** Answers a request under {@code /demo}; returns null when the path is not the demo's. */
    public FullHttpResponse handle(FullHttpRequest request) {
        String path = new QueryStringDecoder(request.uri()).path();
        if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
            return null;
        }
        if (path.equals(RUNS_PATH)) {
            if (!request.method().equals(HttpMethod.POST)) {
                return methodNotAllowed(request, "POST");
            }
            return startRun(request);
        }
        String name = path.equals(PREFIX) || path.equals(PREFIX + "/") ? "index.html" : path.substring(PREFIX.length() + 1);
        byte[] asset = assets.get(name);
        if (asset == null) {
            return null;
        }
        boolean head = request.method().equals(HttpMethod.HEAD);
        if (!head && !request.method().equals(HttpMethod.GET)) {
            return methodNotAllowed(request, "GET, HEAD");
        }
        FullHttpResponse response = response(request, HttpResponseStatus.OK,
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(asset), ASSET_TYPES.get(name));
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, asset.length);
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        if (name.endsWith(".html")) {
            response.headers().set("Content-Security-Policy", PAGE_SECURITY_POLICY);
        }
        return response;
    }

    private FullHttpResponse startRun(FullHttpRequest request) {
        double speed;
        try {
            speed = speed(request);
        } catch (IllegalArgumentException e) {
            return error(request, HttpResponseStatus.BAD_REQUEST, "bad_request", e.getMessage());
        }
        String runId = "demo-" + UUID.randomUUID();
        String token = subscribeTokenForRun.apply(runId);
        DemoScript script = DemoScript.forRun(runId, json);
        switch (simulator.start(runId, script, speed)) {
            case STARTED -> {
                ObjectNode body = json.createObjectNode()
                        .put("runId", runId)
                        .put("token", token)
                        .put("eventsUrl", "/v1/runs/" + runId + "/events")
                        .put("events", script.steps().size())
                        .put("speed", speed)
                        .put("question", DemoScript.QUESTION);
                FullHttpResponse response = json(request, HttpResponseStatus.CREATED, body);
                response.headers().set(HttpHeaderNames.LOCATION, "/v1/runs/" + runId);
                return response;
            }
            case BUSY -> {
                FullHttpResponse response = error(request, HttpResponseStatus.SERVICE_UNAVAILABLE, "over_budget",
                        "too many demo runs at once (" + MAX_ACTIVE_RUNS + "); try again in a few seconds");
                response.headers().set(HttpHeaderNames.RETRY_AFTER, "5");
                return response;
            }
            default -> {
                FullHttpResponse response = error(request, HttpResponseStatus.SERVICE_UNAVAILABLE, "draining",
                        "the demo is shutting down");
                response.headers().set(HttpHeaderNames.RETRY_AFTER, "5");
                return response;
            }
        }
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
        FullHttpResponse response = error(request, HttpResponseStatus.METHOD_NOT_ALLOWED, "bad_request",
                request.method() + " is not allowed here; use " + allow);
        response.headers().set(HttpHeaderNames.ALLOW, allow);
        return response;
    }

    private FullHttpResponse error(FullHttpRequest request, HttpResponseStatus status, String code, String message) {
        return json(request, status, json.createObjectNode().put("error", code).put("message", message));
    }

    private FullHttpResponse json(FullHttpRequest request, HttpResponseStatus status, ObjectNode body) {
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        FullHttpResponse response = response(request, status, Unpooled.wrappedBuffer(bytes), "application/json");
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        response.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        return response;
    }

    private static FullHttpResponse response(FullHttpRequest request, HttpResponseStatus status, ByteBuf content, String type) {
        FullHttpResponse response = new DefaultFullHttpResponse(request.protocolVersion() == null
                ? HttpVersion.HTTP_1_1 : request.protocolVersion(), status, content);
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

    @Override
    public void close() {
        simulator.close();
    }
}
