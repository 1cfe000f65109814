package io.iqstream.server.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code --log-format json}: each record the logger flushes is one JSON object a line, tokens redacted. */
class JsonLogStreamTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";

    @Test
    void aRecordIsOneJsonLineWithItsScopeTraceAndNodeAndNoToken() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(new JsonLogStream(new PrintStream(sink, true, StandardCharsets.UTF_8),
                "10.0.0.1:8080"), false, StandardCharsets.UTF_8);
        try (SdkTracerProvider provider = SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(InMemorySpanExporter.create())).build()) {
            Span span = provider.get("test").spanBuilder("request").startSpan();
            LogScope before = LogScope.enter("run-7", null);
            try (Scope ignored = span.makeCurrent()) {
                // as slf4j-simple writes a record: its line, its stack trace, one flush
                err.println("2026-12-07T10:00:00.000+0000 [iqstream-worker-1-1] WARN io.iqstream.server.X - "
                        + "request GET /v1/runs/run-7/events?access_token=" + JWT + " failed \"quoted\"");
                err.println("java.io.IOException: Bearer " + JWT);
                err.println("\tat io.iqstream.server.X.y(X.java:1)");
                err.flush();
                String[] lines = sink.toString(StandardCharsets.UTF_8).split("\n");
                assertEquals(1, lines.length, sink.toString(StandardCharsets.UTF_8));
                JsonNode o = JSON.readTree(lines[0]);
                assertEquals("WARN", o.get("level").asText());
                assertEquals("2026-12-07T10:00:00.000+0000", o.get("time").asText());
                assertEquals("io.iqstream.server.X", o.get("logger").asText());
                assertEquals("run-7", o.get("run_id").asText());
                assertNull(o.get("stream_path"));
                assertEquals("10.0.0.1:8080", o.get("node").asText());
                assertEquals(span.getSpanContext().getTraceId(), o.get("trace_id").asText());
                assertEquals(span.getSpanContext().getSpanId(), o.get("span_id").asText());
                assertTrue(o.get("message").asText().endsWith("access_token=… failed \"quoted\""),
                        o.get("message").asText());
                assertTrue(o.get("exception").asText().contains("X.java:1"));
                assertFalse(lines[0].contains(JWT), lines[0]);
            } finally {
                LogScope.restore(before);
                span.end();
            }
        }
    }

    @Test
    void textThatIsNotARecordIsAnInfoRecordAndAScopeLessLineNamesNoRun() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(new JsonLogStream(new PrintStream(sink, true, StandardCharsets.UTF_8),
                null), false, StandardCharsets.UTF_8);
        err.println("iqstream: could not start: token=abc");
        err.flush();
        JsonNode o = JSON.readTree(sink.toString(StandardCharsets.UTF_8));
        assertEquals("INFO", o.get("level").asText());
        assertEquals("iqstream: could not start: token=…", o.get("message").asText());
        assertNull(o.get("run_id"));
        assertNull(o.get("trace_id"));
        assertNull(o.get("node"));
    }
}
