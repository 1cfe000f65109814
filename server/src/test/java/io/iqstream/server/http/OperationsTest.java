package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.ProjectVersion;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class OperationsTest {
    @Test
    void healthReadyAndMetricsAnswer() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            String health = Http.get(server.base() + "/healthz").body();
            assertTrue(health.startsWith("ok\niqstream " + ProjectVersion.ofPom() + " (commit ") && health.endsWith(")\n"),
                    health);
            assertEquals(200, Http.get(server.base() + "/readyz").statusCode());
            Http.publish(server.base(), "m1", admin, "{\"type\":\"RUN_STARTED\"}", "{\"type\":\"RUN_FINISHED\"}");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/m1/events", "Authorization: Bearer " + admin)) {
                sub.take(2, 5000);
            }
            Http.publish(server.base(), "m2", "not-a-token", "{\"type\":\"X\"}");
            HttpResponse<String> m = Http.get(server.base() + "/metrics");
            assertEquals(200, m.statusCode());
            assertTrue(m.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
            String text = m.body();
            assertTrue(text.contains("iqstream_runs_created_total 1\n"), text);
            assertTrue(text.contains("iqstream_events_in_total 2\n"), text);
            assertTrue(text.contains("iqstream_events_out_total 2\n"), text);
            assertTrue(text.contains("iqstream_refusals_total{reason=\"unauthenticated\"} 1\n"), text);
            assertTrue(text.contains("# TYPE iqstream_relay_latency_seconds histogram"), text);
            assertTrue(text.contains("iqstream_memory_budget_bytes "), text);
            assertTrue(text.contains("# TYPE iqstream_memory_copies_bytes gauge"), text);
            // the reader of m1 read its sealed (packed) log through a counted copy, given back once it left
            Conditions.await("the copies' count back at 0", 5_000,
                    () -> metricsText(server).contains("\niqstream_memory_copies_bytes 0\n"));
        }
    }

    @Test
    void resumesAreCountedInTheResumeHistogramAndFirstConnectionsAreNot() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            publishRunOfThree(server, "resumed", admin);
            try (SseClient first = SseClient.open(server.port(), "/v1/runs/resumed/events",
                    "Authorization: Bearer " + admin)) {
                first.take(3, 5000);
            }
            try (SseClient again = SseClient.open(server.port(), "/v1/runs/resumed/events",
                    "Authorization: Bearer " + admin, "Last-Event-ID: 1")) {
                assertEquals("2", again.next(5000).id());
            }
            // recorded on the worker right after the replay's flush: wait for it rather than race it
            Conditions.await("the resume counted", 5_000,
                    () -> metricsText(server).contains("iqstream_resume_seconds_count 1\n"));
            String text = metricsText(server);
            assertTrue(text.contains("# TYPE iqstream_resume_seconds histogram"), text);
            assertTrue(text.contains("iqstream_resume_seconds_count 1\n"), text);
            assertTrue(text.contains("iqstream_resume_seconds_bucket{le=\"+Inf\"} 1\n"), text);
            // the resume was its connection's first request: its wait from the accept is counted too, once
            assertTrue(text.contains("iqstream_resume_accept_seconds_count 1\n"), text);
        }
    }

    @Test
    void aResumeAfterAnotherRequestOnItsConnectionIsNotTimedFromTheAccept() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            publishRunOfThree(server, "kept", admin);
            try (RawHttp c = new RawHttp(server.port())) {
                // the run's status first, then the resume on the same kept-alive connection
                c.send("GET /v1/runs/kept HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + admin + "\r\n\r\n");
                assertEquals(200, c.readReply().status());
                c.send("GET /v1/runs/kept/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + admin
                        + "\r\nLast-Event-ID: 1\r\nConnection: close\r\n\r\n");
                assertTrue(c.readToClose().contains("id: 2\n"), "the resume replays event 2");
            }
            Conditions.await("the resume counted", 5_000, () -> metricsText(server).contains(
                    "iqstream_resume_seconds_count 1\n"));
            // its connection's accept was long before its first byte (another request came between): not a wait
            assertTrue(metricsText(server).contains("iqstream_resume_accept_seconds_count 0\n"), metricsText(server));
        }
    }

    /** RUN_STARTED, one TEXT_MESSAGE_CONTENT and RUN_FINISHED: an ended run of three events. */
    private static void publishRunOfThree(TestServer server, String runId, String token) throws Exception {
        Http.publish(server.base(), runId, token, "{\"type\":\"RUN_STARTED\"}",
                "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"x\"}", "{\"type\":\"RUN_FINISHED\"}");
    }

    private static String metricsText(TestServer server) {
        try {
            return Http.get(server.base() + "/metrics").body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void unknownPathIs404AndWrongMethodIs405() throws Exception {
        try (TestServer server = TestServer.start()) {
            assertEquals(404, Http.get(server.base() + "/nope").statusCode());
            HttpResponse<String> r = Http.delete(server.base() + "/v1/runs/x/events", "Authorization",
                    "Bearer " + Tokens.admin());
            assertEquals(405, r.statusCode());
            assertEquals("GET, POST, OPTIONS", r.headers().firstValue("Allow").orElse(""));
        }
    }

    @Test
    void drainingRefusesNewRunsAndLetsOpenOnesFinish() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            try (ChunkedPublisher open = ChunkedPublisher.open(server.port(), "draining-open",
                    "application/x-ndjson", admin)) {
                open.send("{\"type\":\"RUN_STARTED\"}\n");
                long deadline = System.nanoTime() + 30_000_000_000L; // liveness only
                while (server.server().openRuns() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                CompletableFuture<Void> drained = CompletableFuture.runAsync(() -> {
                    try {
                        server.server().drain(10_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                while (!server.server().context().isDraining()) {
                    Thread.sleep(5);
                }
                assertEquals(503, Http.get(server.base() + "/readyz").statusCode());
                HttpResponse<String> refused = Http.publish(server.base(), "draining-new", admin,
                        "{\"type\":\"RUN_STARTED\"}");
                assertEquals(503, refused.statusCode());
                assertTrue(refused.body().contains("\"error\":\"draining\""), refused.body());
                assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""));
                assertTrue(!drained.isDone(), "drain waits for the open run");
                open.send("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"x\"}\n{\"type\":\"RUN_FINISHED\"}\n");
                assertEquals(200, open.finish().status());
                drained.get(5, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }
}
