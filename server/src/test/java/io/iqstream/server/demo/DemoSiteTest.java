package io.iqstream.server.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.iqstream.server.config.DemoSettings;
import io.iqstream.server.metrics.Metrics;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * DemoSite's routes, and what its simulated backend sends: a publish endpoint on a loopback socket records
 * the streamed request line by line, with arrival times (the relay itself is tested elsewhere).
 */
class DemoSiteTest {
    private static final int MAX_RUNS = 4;
    private final ObjectMapper json = new ObjectMapper();
    private HttpServer publishEndpoint;
    private DemoSite site;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<Long> arrivalNanos = new CopyOnWriteArrayList<>();
    private final List<Long> arrivalEpochMs = new CopyOnWriteArrayList<>();
    private final CompletableFuture<PublishRequest> publish = new CompletableFuture<>();

    record PublishRequest(String method, String path, String contentType, String authorization,
            String transferEncoding, String lastEventId) {}

    private final List<PublishRequest> requests = new CopyOnWriteArrayList<>();
    private final List<String> deleted = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        publishEndpoint = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        publishEndpoint.createContext("/v1/runs/", exchange -> {
            if (exchange.getRequestMethod().equals("DELETE")) {
                deleted.add(exchange.getRequestURI().getPath());
                exchange.sendResponseHeaders(204, -1);
                exchange.close();
                return;
            }
            PublishRequest request = new PublishRequest(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                    exchange.getRequestHeaders().getFirst("Content-Type"),
                    exchange.getRequestHeaders().getFirst("Authorization"),
                    exchange.getRequestHeaders().getFirst("Transfer-Encoding"),
                    exchange.getRequestHeaders().getFirst("Last-Event-ID"));
            requests.add(request);
            try (BufferedReader in = new BufferedReader(new InputStreamReader(exchange.getRequestBody(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    arrivalNanos.add(System.nanoTime());
                    arrivalEpochMs.add(System.currentTimeMillis());
                    lines.add(line);
                }
            }
            boolean ended = !lines.isEmpty() && lines.get(lines.size() - 1).contains("RUN_FINISHED");
            byte[] reply = ("{\"runId\":\"x\",\"lastEventId\":" + lines.size() + ",\"ended\":" + ended + "}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, reply.length);
            exchange.getResponseBody().write(reply);
            exchange.close();
            if (ended) {
                publish.complete(request);
            }
        });
        publishEndpoint.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "test-publish-endpoint");
            t.setDaemon(true);
            return t;
        })); // a streamed run holds its thread for the run's length
        publishEndpoint.start();
        URI self = URI.create("http://127.0.0.1:" + publishEndpoint.getAddress().getPort());
        site = new DemoSite(self, runId -> "subscribe-token-for-" + runId, "the-publish-token",
                new DemoSettings(true, MAX_RUNS, 100_000, 200), 64L << 20, new Metrics());
    }

    @AfterEach
    void stop() {
        site.close();
        publishEndpoint.stop(0);
    }

    private static FullHttpRequest request(HttpMethod method, String uri, String body) {
        FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, uri,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        if (!body.isEmpty()) {
            request.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
        }
        return request;
    }

    /** Calls handle and returns status, content type and body, releasing both messages. */
    private String[] call(HttpMethod method, String uri, String body) {
        FullHttpRequest request = request(method, uri, body);
        try {
            CompletableFuture<FullHttpResponse> answer = site.handle(request);
            if (answer == null) {
                return null;
            }
            FullHttpResponse response = answer.join();
            try {
                return new String[] {
                    String.valueOf(response.status().code()),
                    response.headers().get(HttpHeaderNames.CONTENT_TYPE),
                    response.content().toString(StandardCharsets.UTF_8),
                    response.headers().get("Content-Security-Policy")
                };
            } finally {
                response.release();
            }
        } finally {
            request.release();
        }
    }

    @Test
    void servesThePageAndItsFiles() {
        String[] page = call(HttpMethod.GET, "/demo", "");
        assertEquals("200", page[0]);
        assertEquals("text/html; charset=utf-8", page[1]);
        assertTrue(page[2].contains("<script src=\"/demo/demo.js\""), page[2]);
        assertNotNull(page[3], "the page carries a Content-Security-Policy");
        assertEquals("200", call(HttpMethod.GET, "/demo/", "")[0]);
        String[] script = call(HttpMethod.GET, "/demo/demo.js?v=1", "");
        assertEquals("200", script[0]);
        assertTrue(script[1].startsWith("text/javascript"), script[1]);
        assertTrue(script[2].contains("new EventSource("));
        assertEquals("200", call(HttpMethod.GET, "/demo/demo.css", "")[0]);
        assertEquals("", call(HttpMethod.HEAD, "/demo", "")[2]);
    }

    @Test
    void leavesOtherPathsAlone() {
        assertNull(call(HttpMethod.GET, "/v1/runs/x/events", ""));
        assertNull(call(HttpMethod.GET, "/demonstration", ""));
        assertNull(call(HttpMethod.GET, "/demo/../etc/passwd", ""));
        assertNull(call(HttpMethod.GET, "/demo/nothing-here.js", ""));
    }

    @Test
    void refusesWrongMethodsAndBadSpeeds() throws Exception {
        assertEquals("405", call(HttpMethod.GET, "/demo/api/runs", "")[0]);
        assertEquals("405", call(HttpMethod.POST, "/demo", "")[0]);
        String[] bad = call(HttpMethod.POST, "/demo/api/runs?speed=fast", "");
        assertEquals("400", bad[0]);
        assertEquals("bad_request", json.readTree(bad[2]).get("error").asText());
        assertEquals("400", call(HttpMethod.POST, "/demo/api/runs", "{\"speed\":0}")[0]);
        assertEquals("400", call(HttpMethod.POST, "/demo/api/runs", "{\"speed\":\"1\"}")[0]);
        assertEquals("400", call(HttpMethod.POST, "/demo/api/runs", "not json")[0]);
        assertEquals(0, site.activeRuns(), "nothing started");
    }

    @Test
    void startsARunThatIsStreamedThroughThePublishApi() throws Exception {
        double speed = 10; // about 1 s instead of 10
        String[] started = call(HttpMethod.POST, "/demo/api/runs", "{\"speed\":" + speed + "}");
        assertEquals("201", started[0], started[2]);
        JsonNode body = json.readTree(started[2]);
        String runId = body.get("runId").asText();
        assertTrue(runId.matches("[A-Za-z0-9._~:-]{1,128}"), runId);
        assertEquals("subscribe-token-for-" + runId, body.get("token").asText());
        assertEquals("/v1/runs/" + runId + "/events", body.get("eventsUrl").asText());
        assertEquals(429, body.get("events").asInt());

        // the first event's request was answered before the 201; the rest may already be on its way
        assertTrue(requests.size() >= 1, "the 201 comes after the first event was accepted");
        PublishRequest create = requests.get(0);
        assertEquals("POST", create.method());
        assertEquals("/v1/runs/" + runId + "/events", create.path());
        assertEquals(null, create.lastEventId(), "the first request creates the run");

        PublishRequest request = publish.get(20, TimeUnit.SECONDS);
        assertEquals(2, requests.size(), "the first event alone, then the rest in one streamed request");
        assertEquals("/v1/runs/" + runId + "/events", request.path());
        assertEquals("application/x-ndjson", request.contentType());
        assertEquals("Bearer the-publish-token", request.authorization());
        assertEquals("chunked", request.transferEncoding());
        assertEquals("1", request.lastEventId(), "the rest continues after event 1");
        assertEquals(429, lines.size());

        long previousTimestamp = 0;
        for (String line : lines) {
            JsonNode event = json.readTree(line);
            assertTrue(event.get("timestamp").isIntegralNumber(), line);
            long timestamp = event.get("timestamp").asLong();
            assertTrue(timestamp >= previousTimestamp, "timestamps in order");
            previousTimestamp = timestamp;
        }
        assertEquals("RUN_STARTED", json.readTree(lines.get(0)).get("type").asText());
        assertEquals("RUN_FINISHED", json.readTree(lines.get(428)).get("type").asText());
        // at the speed asked: each event is stamped with its scheduled production time, so the stamps span the
        // scripted time divided by the speed (a rule of the schedule, which a busy machine cannot move)
        long scriptedMs = DemoScript.forRun("x", json).steps().get(428).offsetNs() / 10 / 1_000_000;
        long stampedMs = json.readTree(lines.get(428)).get("timestamp").asLong()
                - json.readTree(lines.get(0)).get("timestamp").asLong();
        assertTrue(Math.abs(stampedMs - scriptedMs) < 50, "production times span " + stampedMs + " ms at speed 10,"
                + " scripted " + scriptedMs);
        // not sooner than produced: the last event arrives after its scheduled production time (a lower bound only:
        // a loaded machine makes it later, never sooner; a body sent faster than the stamps say fails; 1 ms for the
        // stamps' clock, read a moment after the schedule's)
        long lastArrivedMs = arrivalEpochMs.get(428);
        long lastStampMs = json.readTree(lines.get(428)).get("timestamp").asLong();
        assertTrue(lastArrivedMs >= lastStampMs - 1, "the last event arrived at " + lastArrivedMs + ", before its"
                + " production time " + lastStampMs);
        // streamed as produced, not sent at the end: lines of the streamed request arrived before the last event was
        // even due to be made (its stamp). A body sent at the end has none; a loaded machine leaves some unless it
        // holds every line back for the whole run (about a second here)
        int arrivedBeforeLastDue = 0;
        for (int i = 1; i < 428; i++) {
            if (arrivalEpochMs.get(i) < lastStampMs) {
                arrivedBeforeLastDue++;
            }
        }
        long spreadMs = TimeUnit.NANOSECONDS.toMillis(arrivalNanos.get(428) - arrivalNanos.get(0));
        System.out.println("demo rate: 429 events at speed 10 arrived over " + spreadMs + " ms, scripted " + scriptedMs
                + " ms; " + arrivedBeforeLastDue + " of the 427 streamed before the last arrived before it was due");
        assertTrue(arrivedBeforeLastDue > 0, "none of the streamed events arrived before the last was due: sent at"
                + " the end, not as produced");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // liveness only
        while ((site.activeRuns() != 0 || site.runsHeld() != 0) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, site.activeRuns());
        assertEquals(0, site.runsHeld(), "given back once deleted");
        assertEquals(List.of("/v1/runs/" + runId), deleted, "deleted after the demo's retention");
    }

    @Test
    void refusesRunsBeyondItsQuotaWith429AndRetryAfter() throws Exception {
        for (int i = 0; i < MAX_RUNS; i++) {
            assertEquals("201", call(HttpMethod.POST, "/demo/api/runs?speed=0.1", "")[0], "run " + i);
        }
        assertEquals(MAX_RUNS, site.runsHeld());
        FullHttpRequest request = request(HttpMethod.POST, "/demo/api/runs", "");
        FullHttpResponse busy = site.handle(request).join();
        try {
            assertEquals(429, busy.status().code());
            assertEquals("5", busy.headers().get(HttpHeaderNames.RETRY_AFTER));
            assertEquals("demo_quota", json.readTree(busy.content().toString(StandardCharsets.UTF_8)).get("error").asText());
        } finally {
            busy.release();
            request.release();
        }
        site.close();
    }

    @Test
    void refusesStartsWhenClosed() {
        site.close();
        assertEquals("503", call(HttpMethod.POST, "/demo/api/runs", "")[0], "closed: no new runs");
    }
}
