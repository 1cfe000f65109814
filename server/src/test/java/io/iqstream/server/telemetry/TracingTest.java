package io.iqstream.server.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.cluster.Member;
import io.iqstream.server.cluster.Rendezvous;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.DurableHttp;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two real nodes with --peers in one JVM, tracing into one in-memory exporter: a publish continues the agent's
 * trace, a resume read on the node that does not hold the run is relayed (a client span whose context the peer's
 * span continues) and links to the publish span; Durable Streams requests are spans by operation and read mode.
 */
class TracingTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String AGENT_SPAN_ID = "00f067aa0ba902b7";
    private static final String TRACEPARENT = "00-" + TRACE_ID + "-" + AGENT_SPAN_ID + "-01";
    static InMemorySpanExporter spans;
    static SdkTracerProvider provider;
    static TestServer a;
    static TestServer b;

    @BeforeAll
    static void start() throws Exception {
        spans = InMemorySpanExporter.create();
        provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans))
                .setSampler(Sampler.parentBased(Sampler.alwaysOn())).build();
        Telemetry.testOverride = OpenTelemetrySdk.builder().setTracerProvider(provider)
                .setPropagators(ContextPropagators.create(TextMapPropagator.composite(
                        W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance())))
                .build();
        try {
            int pa = Ports.free();
            int pb = Ports.free();
            String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
            a = TestServer.start("--port", String.valueOf(pa), "--peers", peers, "--advertise", "127.0.0.1:" + pa,
                    "--cluster-secret", SECRET);
            b = TestServer.start("--port", String.valueOf(pb), "--peers", peers, "--advertise", "127.0.0.1:" + pb,
                    "--cluster-secret", SECRET);
        } finally {
            Telemetry.testOverride = null;
        }
        for (TestServer s : List.of(a, b)) {
            Conditions.await("the nodes see each other", 30_000,
                    () -> s.server().context().cluster().membership().view().ready().size() == 2);
        }
    }

    @AfterAll
    static void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        provider.close();
    }

    @Test
    void aResumeOnTheOtherNodeIsRelayedAndLinksToThePublishThatContinuesTheAgentsTrace() throws Exception {
        String run = runOwnedBy(a);
        HttpResponse<String> published = Http.post(a.base() + "/v1/runs/" + run + "/events", "application/x-ndjson",
                "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"" + run + "\"}\n"
                        + "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"hi\"}\n"
                        + "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"" + run + "\"}\n",
                "Authorization", "Bearer " + Tokens.admin(), "traceparent", TRACEPARENT, "baggage", "tenant=acme");
        assertEquals(200, published.statusCode(), published.body());
        HttpResponse<String> read = Http.get(b.base() + "/v1/runs/" + run + "/events",
                "Authorization", "Bearer " + Tokens.admin(), "Last-Event-ID", "1");
        assertEquals(200, read.statusCode());
        assertTrue(read.body().contains("RUN_FINISHED"), read.body());

        SpanData publish = await("the publish span", s -> s.getName().equals("POST /v1/runs/{runId}/events")
                && run.equals(s.getAttributes().get(TraceAttributes.RUN_ID)));
        assertEquals(TRACE_ID, publish.getTraceId());
        assertEquals(AGENT_SPAN_ID, publish.getParentSpanId());
        assertEquals(SpanKind.SERVER, publish.getKind());
        assertEquals(3L, publish.getAttributes().get(TraceAttributes.PUBLISH_EVENTS));
        assertEquals("ended", publish.getAttributes().get(TraceAttributes.PUBLISH_OUTCOME));
        assertTrue(publish.getAttributes().get(TraceAttributes.PUBLISH_BYTES) > 0);
        assertEquals(200L, publish.getAttributes().get(TraceAttributes.HTTP_STATUS));
        assertEquals("send", publish.getAttributes().get(TraceAttributes.MESSAGING_OPERATION_TYPE));

        Predicate<SpanData> reads = s -> s.getName().equals("GET /v1/runs/{runId}/events")
                && run.equals(s.getAttributes().get(TraceAttributes.RUN_ID));
        SpanData entry = await("the read span on the node the browser reached",
                reads.and(s -> s.getAttributes().get(TraceAttributes.FROM_PEER) == null));
        SpanData hop = await("the relay span", s -> s.getKind() == SpanKind.CLIENT
                && s.getParentSpanId().equals(entry.getSpanId()));
        assertEquals("answered", hop.getAttributes().get(TraceAttributes.RELAY_OUTCOME));
        assertEquals(a.server().context().cluster().membership().self().toString(),
                hop.getAttributes().get(TraceAttributes.RELAY_PEER));
        SpanData served = await("the read span on the node that holds the run",
                reads.and(s -> Boolean.TRUE.equals(s.getAttributes().get(TraceAttributes.FROM_PEER))));
        assertEquals(hop.getSpanId(), served.getParentSpanId());
        assertEquals(entry.getTraceId(), served.getTraceId());
        assertEquals(1L, served.getAttributes().get(TraceAttributes.RESUME_AFTER));
        assertEquals(2L, served.getAttributes().get(TraceAttributes.READ_REPLAYED));
        assertEquals(2L, served.getAttributes().get(TraceAttributes.READ_EVENTS));
        assertEquals("ended", served.getAttributes().get(TraceAttributes.READ_OUTCOME));
        assertEquals(1, served.getLinks().size(), "the read links to the run's publish");
        assertEquals(publish.getSpanId(), served.getLinks().get(0).getSpanContext().getSpanId());
        assertEquals(TRACE_ID, served.getLinks().get(0).getSpanContext().getTraceId());
        assertEquals(200L, entry.getAttributes().get(TraceAttributes.HTTP_STATUS));
    }

    @Test
    void durableStreamRequestsAreSpansByOperationAndReadMode() throws Exception {
        String base = a.base() + "/v1/stream/traced-" + System.nanoTime();
        String[] h = {"Authorization", "Bearer " + Tokens.admin(), "traceparent", TRACEPARENT};
        assertEquals(201, DurableHttp.send("PUT", base, null, concat(h, "Content-Type", "text/plain")).statusCode());
        int appended = DurableHttp.send("POST", base, "hello", concat(h, "Content-Type", "text/plain")).statusCode();
        assertTrue(appended == 200 || appended == 204, "append: " + appended);
        assertEquals(200, DurableHttp.send("GET", base + "?offset=-1", null, h).statusCode());
        String path = base.substring(base.indexOf("/traced-"));
        Predicate<SpanData> ofStream = s -> path.equals(s.getAttributes().get(TraceAttributes.STREAM_PATH))
                && s.getAttributes().get(TraceAttributes.FROM_PEER) == null;
        SpanData create = await("create", ofStream.and(s -> "create".equals(op(s))));
        SpanData append = await("append", ofStream.and(s -> "append".equals(op(s))));
        SpanData read = await("read", ofStream.and(s -> "read".equals(op(s))));
        assertEquals(201L, create.getAttributes().get(TraceAttributes.HTTP_STATUS));
        assertEquals(5L, append.getAttributes().get(TraceAttributes.HTTP_REQUEST_BODY_SIZE));
        assertEquals("catch-up", read.getAttributes().get(TraceAttributes.STREAM_READ_MODE));
        assertEquals("-1", read.getAttributes().get(TraceAttributes.STREAM_OFFSET));
        assertNotNull(read.getAttributes().get(TraceAttributes.STREAM_NEXT_OFFSET));
        for (SpanData s : List.of(create, append, read)) {
            assertEquals(TRACE_ID, s.getTraceId());
            assertEquals(SpanKind.SERVER, s.getKind());
        }
    }

    @Test
    void aThreadListingIsASpanAndOperationsEndpointsAreNot() throws Exception {
        HttpResponse<String> listed = Http.get(a.base() + "/v1/threads/thread-x/runs",
                "Authorization", "Bearer " + Tokens.admin(), "traceparent", TRACEPARENT);
        // the test token has no "threads" right: a refused listing is a span too, with its status
        assertEquals(403, listed.statusCode(), listed.body());
        SpanData listing = await("the listing span", s -> s.getName().equals("GET /v1/threads/{threadId}/runs")
                && s.getAttributes().get(TraceAttributes.FROM_PEER) == null);
        assertEquals("thread-x", listing.getAttributes().get(TraceAttributes.THREAD_ID));
        assertEquals(403L, listing.getAttributes().get(TraceAttributes.HTTP_STATUS));
        assertEquals(TRACE_ID, listing.getTraceId());
        Http.get(a.base() + "/healthz", "traceparent", TRACEPARENT);
        assertTrue(spans.getFinishedSpanItems().stream().noneMatch(s -> s.getName().contains("healthz")));
    }

    @Test
    void theSwitchIsOffUnlessAnExporterOrEndpointIsConfigured() {
        assertEquals(false, Telemetry.configuredBy(Map.of()));
        assertEquals(false, Telemetry.configuredBy(Map.of("OTEL_SERVICE_NAME", "x")));
        assertEquals(false, Telemetry.configuredBy(Map.of("OTEL_TRACES_EXPORTER", "none",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")));
        assertEquals(true, Telemetry.configuredBy(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")));
        assertEquals(true, Telemetry.configuredBy(Map.of("OTEL_TRACES_EXPORTER", "otlp")));
        assertEquals(false, Telemetry.configuredBy(Map.of("OTEL_TRACES_EXPORTER", "otlp", "OTEL_SDK_DISABLED",
                "true")));
        try (TestServer plain = TestServer.start()) {
            assertEquals(false, plain.server().context().telemetry().isOn());
        }
    }

    private static String op(SpanData s) {
        return s.getAttributes().get(TraceAttributes.STREAM_OPERATION);
    }

    private static String[] concat(String[] a, String... more) {
        String[] all = java.util.Arrays.copyOf(a, a.length + more.length);
        System.arraycopy(more, 0, all, a.length, more.length);
        return all;
    }

    private static String runOwnedBy(TestServer node) {
        Member self = node.server().context().cluster().membership().self();
        List<Member> members = node.server().context().cluster().membership().view().ready();
        for (int n = 0; n < 500; n++) {
            String run = "traced-" + System.nanoTime() + "-" + n;
            if (Rendezvous.owner(run, members).equals(self)) {
                return run;
            }
        }
        throw new AssertionError("no run id of 500 hashed to " + self);
    }

    private static SpanData await(String what, Predicate<SpanData> which) throws InterruptedException {
        Conditions.await(what, 10_000, () -> spans.getFinishedSpanItems().stream().anyMatch(which));
        List<SpanData> found = spans.getFinishedSpanItems().stream().filter(which).toList();
        assertEquals(1, found.size(), what + ": " + found);
        return found.get(0);
    }

}
