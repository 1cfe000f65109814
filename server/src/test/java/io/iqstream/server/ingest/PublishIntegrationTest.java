package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PublishIntegrationTest {
    static TestServer server;
    static String admin;

    @BeforeAll
    static void start() {
        server = TestServer.start("--max-event-bytes", "2k", "--max-run-bytes", "8k");
        admin = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String ev(String type) {
        return "{\"type\":\"" + type + "\"}";
    }

    private SseClient subscribe(String runId, String... headers) throws Exception {
        String[] all = new String[headers.length + 1];
        all[0] = "Authorization: Bearer " + admin;
        System.arraycopy(headers, 0, all, 1, headers.length);
        return SseClient.open(server.port(), "/v1/runs/" + runId + "/events", all);
    }

    @Test
    void deliversEachEventBeforeThePublishRequestEnds() throws Exception {
        try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "stream-1", "application/x-ndjson", admin)) {
            pub.send(ev("RUN_STARTED") + "\n");
            try (SseClient sub = subscribe("stream-1")) {
                assertEquals("1", sub.next(5000).id());
                for (int i = 0; i < 5; i++) {
                    // half a line, then the rest: delivered when its newline arrives
                    pub.send("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"t" + i);
                    pub.send("\"}\n");
                    SseClient.Event e = sub.next(5000);
                    assertEquals(String.valueOf(i + 2), e.id());
                    assertEquals("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"t" + i + "\"}", e.data());
                }
                pub.send(ev("RUN_FINISHED") + "\n");
                assertEquals("7", sub.next(5000).id());
                assertTrue(sub.awaitEnd(5000), "stream ends after the terminal event");
            }
            ChunkedPublisher.Reply reply = pub.finish();
            assertEquals(200, reply.status());
            assertEquals("{\"runId\":\"stream-1\",\"lastEventId\":7,\"ended\":true}", reply.body());
        }
    }

    @Test
    void acceptsAgUiSseFramingAsPublishBody() throws Exception {
        String body = "data: {\"type\":\"RUN_STARTED\",\ndata:  \"threadId\":\"t\"}\n\nevent: x\nid: 9\n: c\n"
                + "data: {\"type\":\"RUN_FINISHED\"}\n\n";
        HttpResponse<String> r = Http.post(server.base() + "/v1/runs/sse-body/events", "text/event-stream", body,
                "Authorization", "Bearer " + admin);
        assertEquals(200, r.statusCode(), r.body());
        try (SseClient sub = subscribe("sse-body")) {
            List<SseClient.Event> events = sub.take(2, 5000);
            assertEquals("{\"type\":\"RUN_STARTED\",  \"threadId\":\"t\"}", events.get(0).data(),
                    "the newline inside the event reaches the stream as a space, never raw");
        }
    }

    @Test
    void acceptsJsonObjectAndArrayBodies() throws Exception {
        String url = server.base() + "/v1/runs/json-body/events";
        assertEquals(200, Http.post(url, "application/json", ev("A"), "Authorization", "Bearer " + admin)
                .statusCode());
        HttpResponse<String> r = Http.post(url, "application/json", "[" + ev("B") + ",\n  " + ev("RUN_FINISHED")
                + "]", "Authorization", "Bearer " + admin);
        assertEquals("{\"runId\":\"json-body\",\"lastEventId\":3,\"ended\":true}", r.body());
    }

    @Test
    void successiveRequestsAppendInOrder() throws Exception {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = Http.publish(server.base(), "succ", admin, "{\"type\":\"X\",\"n\":" + i + "}");
            assertEquals("{\"runId\":\"succ\",\"lastEventId\":" + i + ",\"ended\":false}", r.body());
        }
        try (SseClient sub = subscribe("succ", "Last-Event-ID: 1")) {
            List<SseClient.Event> events = sub.take(2, 5000);
            assertEquals("{\"type\":\"X\",\"n\":2}", events.get(0).data());
            assertEquals("3", events.get(1).id());
        }
    }

    @Test
    void secondConcurrentPublisherGets409() throws Exception {
        try (ChunkedPublisher first = ChunkedPublisher.open(server.port(), "dup-pub", "application/x-ndjson",
                admin)) {
            first.send(ev("RUN_STARTED") + "\n");
            waitForEvents("dup-pub", 1);
            HttpResponse<String> second = Http.publish(server.base(), "dup-pub", admin, ev("X"));
            assertEquals(409, second.statusCode());
            assertTrue(second.body().contains("\"error\":\"publisher_active\""), second.body());
            first.send(ev("RUN_FINISHED") + "\n");
            assertEquals(200, first.finish().status());
        }
    }

    @Test
    void eventsAfterTheTerminalEventGet409() throws Exception {
        HttpResponse<String> r = Http.publish(server.base(), "after-end", admin, ev("RUN_STARTED"),
                ev("RUN_FINISHED"), ev("LATE"));
        assertEquals(409, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"run_ended\"") && r.body().contains("\"position\":3"), r.body());
        HttpResponse<String> again = Http.publish(server.base(), "after-end", admin, ev("LATER"));
        assertEquals(409, again.statusCode());
        assertEquals(2, status("after-end").events);
    }

    @Test
    void malformedJsonIs400WithItsPositionAndEarlierEventsStay() throws Exception {
        HttpResponse<String> r = Http.publish(server.base(), "bad-json", admin, ev("A"), ev("B"), "{\"type\":",
                ev("C"));
        assertEquals(400, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"bad_json\"") && r.body().contains("\"position\":3"), r.body());
        assertEquals(2, status("bad-json").events);
    }

    @Test
    void eventWithoutTypeIs400() throws Exception {
        HttpResponse<String> r = Http.publish(server.base(), "no-type", admin, ev("A"), "{\"kind\":\"x\"}");
        assertEquals(400, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"missing_type\"") && r.body().contains("\"position\":2"), r.body());
    }

    @Test
    void oversizeEventIs413() throws Exception {
        String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "x".repeat(3000) + "\"}";
        HttpResponse<String> r = Http.publish(server.base(), "too-big", admin, ev("A"), big);
        assertEquals(413, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"event_too_large\"") && r.body().contains("\"position\":2"),
                r.body());
        assertEquals(1, status("too-big").events);
    }

    @Test
    void runPastItsCapIs413AndKeepsWhatWasAccepted() throws Exception {
        String chunk = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "y".repeat(1500) + "\"}";
        HttpResponse<String> r = Http.publish(server.base(), "run-cap", admin, chunk, chunk, chunk, chunk, chunk,
                chunk, chunk);
        assertEquals(413, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"run_too_large\""), r.body());
        int kept = status("run-cap").events;
        assertTrue(kept >= 4 && kept < 7, "kept " + kept);
        try (SseClient sub = subscribe("run-cap")) {
            SseClient.assertConsecutive(sub.take(kept, 5000), 1);
        }
    }

    @Test
    void answersExpectContinueSoLargeUploadsDoNotStall() throws Exception {
        // a client that asks sends no body until it reads 100 Continue: the server must send it, unprompted by
        // any body byte (no time bound: a missing 100 is a read that times out, a wrong first line a mismatch)
        String body = ev("A") + "\n";
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(20_000);
            var out = s.getOutputStream();
            var in = new java.io.BufferedReader(new java.io.InputStreamReader(s.getInputStream(),
                    java.nio.charset.StandardCharsets.ISO_8859_1));
            out.write(("POST /v1/runs/expect/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin
                    + "\r\nContent-Type: application/x-ndjson\r\nContent-Length: " + body.length()
                    + "\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n").getBytes(
                            java.nio.charset.StandardCharsets.ISO_8859_1));
            out.flush();
            assertEquals("HTTP/1.1 100 Continue", in.readLine(), "the interim answer, before any body byte");
            assertEquals("", in.readLine());
            out.write(body.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            out.flush();
            String status = in.readLine();
            assertTrue(status.startsWith("HTTP/1.1 200"), status);
        }
        assertEquals(new Status(1, false), status("expect"));
    }

    @Test
    void unsupportedContentTypeIs415() throws Exception {
        HttpResponse<String> r = Http.post(server.base() + "/v1/runs/ct/events", "text/plain", ev("A"),
                "Authorization", "Bearer " + admin);
        assertEquals(415, r.statusCode());
        assertTrue(r.body().contains("unsupported_media_type"));
    }

    @Test
    void badRunIdIs400() throws Exception {
        HttpResponse<String> r = Http.publish(server.base(), "bad%20id", admin, ev("A"));
        assertEquals(400, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"bad_run_id\""), r.body());
        assertEquals(400, Http.publish(server.base(), "x".repeat(129), admin, ev("A")).statusCode());
        assertEquals(200, Http.publish(server.base(), "A-z0_9.~:" + "x".repeat(119), admin, ev("A")).statusCode());
    }

    record Status(int events, boolean ended) {}

    private Status status(String runId) throws Exception {
        HttpResponse<String> r = Http.get(server.base() + "/v1/runs/" + runId, "Authorization", "Bearer " + admin);
        assertEquals(200, r.statusCode(), r.body());
        String b = r.body();
        int events = Integer.parseInt(b.replaceAll(".*\"events\":(\\d+).*", "$1"));
        return new Status(events, b.contains("\"ended\":true"));
    }

    private void waitForEvents(String runId, int n) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L; // liveness only
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = Http.get(server.base() + "/v1/runs/" + runId, "Authorization",
                    "Bearer " + admin);
            if (r.statusCode() == 200 && status(runId).events >= n) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("run " + runId + " never reached " + n + " events");
    }
}
