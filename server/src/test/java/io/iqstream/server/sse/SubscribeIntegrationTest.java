package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SubscribeIntegrationTest {
    static TestServer server;
    static String admin;

    @BeforeAll
    static void start() {
        server = TestServer.start("--heartbeat", "200ms", "--retry", "1500ms", "--retry-jitter", "0", "--await-run", "1s",
                "--cors-origin", "https://app.example");
        admin = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static List<String> run(int contentEvents, boolean finish) {
        List<String> lines = new ArrayList<>();
        lines.add("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}");
        for (int i = 0; i < contentEvents; i++) {
            lines.add("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"tok" + i + "\"}");
        }
        if (finish) {
            lines.add("{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}");
        }
        return lines;
    }

    private void publish(String runId, List<String> lines) throws Exception {
        assertEquals(200, Http.publish(server.base(), runId, admin, lines.toArray(new String[0])).statusCode());
    }

    private SseClient open(String path, String... headers) throws Exception {
        String[] all = new String[headers.length + 1];
        all[0] = "Authorization: Bearer " + admin;
        System.arraycopy(headers, 0, all, 1, headers.length);
        return SseClient.open(server.port(), path, all);
    }

    @Test
    void streamStartsWithRetryAndWritesIdAndDataFrames() throws Exception {
        List<String> lines = run(3, true);
        publish("frames", lines);
        try (SseClient sub = open("/v1/runs/frames/events")) {
            assertEquals(200, sub.status());
            assertTrue(sub.header("Content-Type").startsWith("text/event-stream"));
            assertEquals("no-cache", sub.header("Cache-Control"));
            assertEquals("no", sub.header("X-Accel-Buffering"));
            List<SseClient.Event> events = sub.take(5, 5000);
            assertEquals("1500", sub.retry());
            SseClient.assertConsecutive(events, 1);
            for (int i = 0; i < events.size(); i++) {
                assertEquals(lines.get(i), events.get(i).data());
            }
            assertTrue(sub.awaitEnd(5000));
        }
    }

    @Test
    void framesUseLfLineEndingsOnly() throws Exception {
        publish("raw-bytes", run(1, true));
        String sse = rawStream("raw-bytes", "HTTP/1.1");
        assertTrue(sse.startsWith("retry: 1500\n\nid: 1\ndata: {"), sse);
        assertFalse(sse.contains("\r"));
        assertTrue(sse.contains("\n\nid: 3\ndata: {\"type\":\"RUN_FINISHED\""), sse);
    }

    @Test
    void everyStreamOpensWithTheRetryLine() throws Exception {
        // the line is one buffer made at start and shared: a stream's write (which releases what it wrote) must
        // leave it whole for the next stream, on either version's path
        publish("retry-each", run(1, true));
        for (String version : List.of("HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/1.1")) {
            String sse = rawStream("retry-each", version);
            assertTrue(sse.startsWith("retry: 1500\n\nid: 1\ndata: {"), version + ": " + sse);
        }
    }

    /** The whole SSE body of a read of {@code runId} over a raw socket, its chunked framing (HTTP/1.1) removed. */
    private String rawStream(String runId, String version) throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write(("GET /v1/runs/" + runId + "/events " + version + "\r\nHost: x\r\n"
                    + "Authorization: Bearer " + admin + "\r\nConnection: close\r\n\r\n").getBytes());
            String all = new String(s.getInputStream().readAllBytes());
            String body = all.substring(all.indexOf("\r\n\r\n") + 4);
            // strip the chunked framing: chunk-size lines and their CRLFs
            return version.equals("HTTP/1.0") ? body
                    : body.replaceAll("(?m)^[0-9a-f]+\r\n", "").replace("\r\n", "");
        }
    }

    @Test
    void resumesAfterLastEventIdHeaderWithNoGapOrDuplicate() throws Exception {
        List<String> lines = run(20, true);
        publish("resume-h", lines);
        try (SseClient sub = open("/v1/runs/resume-h/events", "Last-Event-ID: 7")) {
            List<SseClient.Event> events = sub.take(15, 5000);
            SseClient.assertConsecutive(events, 8);
            assertEquals(lines.get(7), events.get(0).data());
            assertTrue(sub.awaitEnd(5000));
            assertEquals(0, sub.pending(), "nothing after the terminal event");
        }
    }

    @Test
    void resumesFromQueryParameter() throws Exception {
        publish("resume-q", run(5, true));
        try (SseClient sub = open("/v1/runs/resume-q/events?lastEventId=5")) {
            List<SseClient.Event> events = sub.take(2, 5000);
            SseClient.assertConsecutive(events, 6);
        }
    }

    @Test
    void liveResumeWhileThePublisherKeepsWriting() throws Exception {
        try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "live-resume", "application/x-ndjson",
                admin)) {
            List<String> lines = run(30, true);
            for (int i = 0; i < 10; i++) {
                pub.send(lines.get(i) + "\n");
            }
            int seen;
            try (SseClient first = open("/v1/runs/live-resume/events")) {
                seen = Integer.parseInt(first.take(10, 5000).get(9).id());
            }
            for (int i = 10; i < 20; i++) {
                pub.send(lines.get(i) + "\n");
            }
            try (SseClient second = open("/v1/runs/live-resume/events", "Last-Event-ID: " + seen)) {
                for (int i = 20; i < lines.size(); i++) {
                    pub.send(lines.get(i) + "\n");
                }
                List<SseClient.Event> rest = second.take(lines.size() - seen, 5000);
                SseClient.assertConsecutive(rest, seen + 1);
                assertEquals(lines.get(lines.size() - 1), rest.get(rest.size() - 1).data());
                assertTrue(second.awaitEnd(5000));
            }
            assertEquals(200, pub.finish().status());
        }
    }

    @Test
    void reconnectHoldingTheLastEventOfAnEndedRunGets204() throws Exception {
        publish("done-204", run(2, true));
        try (SseClient sub = open("/v1/runs/done-204/events", "Last-Event-ID: 4")) {
            assertEquals(204, sub.status());
        }
    }

    @Test
    void lastEventIdBeyondAnOpenRunIs400() throws Exception {
        publish("beyond", run(2, false));
        try (SseClient sub = open("/v1/runs/beyond/events", "Last-Event-ID: 50")) {
            assertEquals(400, sub.status());
            assertTrue(sub.body().contains("bad_last_event_id"));
        }
    }

    @Test
    void malformedLastEventIdIs400() throws Exception {
        for (String bad : new String[] {"abc", "-1", "1.5", "99999999999"}) {
            try (SseClient sub = open("/v1/runs/any/events", "Last-Event-ID: " + bad)) {
                assertEquals(400, sub.status(), bad);
                assertTrue(sub.body().contains("\"error\":\"bad_last_event_id\""), sub.body());
            }
        }
        try (SseClient sub = open("/v1/runs/any/events?lastEventId=x")) {
            assertEquals(400, sub.status());
        }
    }

    @Test
    void subscriberArrivingBeforeTheRunWaitsForIt() throws Exception {
        // the subscriber first: its request is held (await-run) until the run exists; the publish comes once the
        // run's worker says a subscriber waits for it, a condition, not a sleep
        CompletableFuture<SseClient> opening = CompletableFuture.supplyAsync(() -> {
            try {
                return open("/v1/runs/early-bird/events");
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        try {
            Conditions.await("a subscriber waits for run early-bird", 5000, () -> awaited("early-bird"));
            assertFalse(opening.isDone(), "no answer while the run does not exist");
            publish("early-bird", run(1, true));
            try (SseClient sub = opening.get(5, TimeUnit.SECONDS)) {
                assertEquals(200, sub.status());
                SseClient.assertConsecutive(sub.take(3, 5000), 1);
            }
        } finally {
            opening.cancel(true);
        }
    }

    /** Whether the worker owning {@code runId} holds a subscriber waiting for it, asked on that worker's loop. */
    private static boolean awaited(String runId) {
        var owner = server.server().context().workers().ownerOf(runId);
        return owner.loop().submit(() -> owner.registry().isAwaited(runId)).syncUninterruptibly().getNow();
    }

    @Test
    void runThatNeverAppearsIs404AfterAwaitRun() throws Exception {
        long t0 = System.nanoTime();
        try (SseClient sub = open("/v1/runs/never/events")) {
            assertEquals(404, sub.status());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 900, "waited " + ms + " ms");
            assertTrue(sub.body().contains("\"error\":\"not_found\""));
        }
    }

    @Test
    void idleStreamCarriesHeartbeatComments() throws Exception {
        publish("quiet", run(1, false));
        try (SseClient sub = open("/v1/runs/quiet/events")) {
            sub.take(2, 5000);
            long deadline = System.nanoTime() + 30_000_000_000L; // liveness only: one is due every 200 ms
            while (sub.comments().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertFalse(sub.comments().isEmpty(), "a heartbeat comment (--heartbeat 200ms) within 30 s");
            assertEquals(": hb", sub.comments().get(0));
        }
    }

    @Test
    void corsHeadersForAnAllowedOriginOnly() throws Exception {
        publish("cors", run(1, true));
        try (SseClient sub = open("/v1/runs/cors/events", "Origin: https://app.example")) {
            assertEquals("https://app.example", sub.header("Access-Control-Allow-Origin"));
        }
        try (SseClient sub = open("/v1/runs/cors/events", "Origin: https://evil.example")) {
            assertEquals(null, sub.header("Access-Control-Allow-Origin"));
        }
        var pre = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(server.base() + "/v1/runs/cors/events"))
                .method("OPTIONS", java.net.http.HttpRequest.BodyPublishers.noBody())
                .header("Origin", "https://app.example").header("Access-Control-Request-Method", "GET").build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(204, pre.statusCode());
        assertTrue(pre.headers().firstValue("Access-Control-Allow-Headers").orElse("").contains("Last-Event-ID"));
    }

    @Test
    void slowReaderDoesNotHoldUpAFastOne() throws Exception {
        // a reader that never reads: its socket fills; the other still gets everything live
        String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "z".repeat(60_000) + "\"}";
        try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "slow-fast", "application/x-ndjson",
                admin);
                java.net.Socket stuck = new java.net.Socket("127.0.0.1", server.port())) {
            stuck.setReceiveBufferSize(4096);
            pub.send(run(0, false).get(0) + "\n");
            stuck.getOutputStream().write(("GET /v1/runs/slow-fast/events HTTP/1.1\r\nHost: x\r\n"
                    + "Authorization: Bearer " + admin + "\r\n\r\n").getBytes());
            try (SseClient fast = open("/v1/runs/slow-fast/events")) {
                for (int i = 0; i < 40; i++) {
                    pub.send(big + "\n");
                }
                pub.send("{\"type\":\"RUN_FINISHED\"}\n");
                List<SseClient.Event> events = fast.take(42, 10_000);
                SseClient.assertConsecutive(events, 1);
                assertTrue(fast.awaitEnd(5000));
            }
            assertEquals(200, pub.finish().status());
        }
    }
}
