package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs in the AI SDK's UI message stream ({@link RunProtocol#UI_MESSAGE_STREAM}): declared by the creating POST's
 * {@code x-vercel-ai-ui-message-stream: v1}, relayed byte for byte, ended by {@code [DONE]} (or a closing chunk at
 * the body's end), and ended by the server in the protocol's own chunks, never with an AG-UI event.
 */
class UiMessageStreamRunTest {
    private static final String HEADER = "x-vercel-ai-ui-message-stream: v1";
    /** The AI SDK's own SSE text (JsonToSseTransformStream): data lines, a blank line each, [DONE] at the end. */
    private static final String CHUNKS = "data: {\"type\":\"start\",\"messageId\":\"m1\"}\n\n"
            + "data: {\"type\":\"start-step\"}\n\n"
            + "data: {\"type\":\"text-start\",\"id\":\"t\"}\n\n"
            + "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"h\u00e9llo \ud83d\ude00 \\ud83d \\\"q\\\"\"}\n\n"
            + "data: {\"type\":\"text-end\",\"id\":\"t\"}\n\n"
            + "data: {\"type\":\"finish-step\"}\n\n"
            + "data: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\n";
    private static final String DONE = "data: [DONE]\n\n";

    /** The body of a finished run's read, with the server's retry line and id lines taken out. */
    private static String withoutIds(String body) {
        StringBuilder out = new StringBuilder();
        for (String line : body.split("\n", -1)) {
            if (!line.startsWith("id: ") && !line.startsWith("retry: ")) {
                out.append(line).append('\n');
            }
        }
        // the split gives one empty piece after the last LF; and the retry line's blank line is left at the start
        return out.substring(1, out.length() - 1);
    }

    @Test
    void relaysTheAiSdksSseTextByteForByteAndEndsWithDone() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            HttpResponse<String> pub = Http.post(server.base() + "/v1/runs/ui-1/events", "text/event-stream",
                    CHUNKS + DONE, "Authorization", "Bearer " + admin, "x-vercel-ai-ui-message-stream", "v1");
            assertEquals(200, pub.statusCode(), pub.body());
            assertEquals("{\"runId\":\"ui-1\",\"lastEventId\":7,\"ended\":true}", pub.body());

            HttpResponse<String> read = Http.get(server.base() + "/v1/runs/ui-1/events", "Authorization",
                    "Bearer " + admin);
            assertEquals(200, read.statusCode());
            assertEquals("v1", read.headers().firstValue("x-vercel-ai-ui-message-stream").orElse(null));
            assertTrue(read.body().contains("id: 7\ndata: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\n"
                    + DONE), read.body());
            assertEquals(CHUNKS + DONE, withoutIds(read.body()), "the producer's text, exactly");

            HttpResponse<String> status = Http.get(server.base() + "/v1/runs/ui-1", "Authorization",
                    "Bearer " + admin);
            assertTrue(status.body().contains("\"protocol\":\"ui-message-stream\""), status.body());
        }
    }

    @Test
    void resumesAfterLastEventIdWithTheRestAndDone() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.post(server.base() + "/v1/runs/ui-2/events", "text/event-stream", CHUNKS + DONE,
                    "Authorization", "Bearer " + admin, "x-vercel-ai-ui-message-stream", "v1");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/ui-2/events",
                    "Authorization: Bearer " + admin, "Last-Event-ID: 5")) {
                List<SseClient.Event> rest = sub.take(3, 5000);
                assertEquals("6", rest.get(0).id());
                assertEquals("{\"type\":\"finish-step\"}", rest.get(0).data());
                assertEquals("[DONE]", rest.get(2).data());
                assertTrue(sub.awaitEnd(5000));
            }
            // all read: 204, as for AG-UI
            HttpResponse<String> none = Http.get(server.base() + "/v1/runs/ui-2/events", "Authorization",
                    "Bearer " + admin, "Last-Event-ID", "7");
            assertEquals(204, none.statusCode());
        }
    }

    @Test
    void ndjsonEndsWhenTheBodyEndsRightAfterAClosingChunk() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            String auth = "Bearer " + admin;
            HttpResponse<String> closed = Http.post(server.base() + "/v1/runs/ui-3/events", "application/x-ndjson",
                    "{\"type\":\"start\"}\n{\"type\":\"finish\"}\n", "Authorization", auth,
                    "x-vercel-ai-ui-message-stream", "v1");
            assertTrue(closed.body().endsWith("\"ended\":true}"), closed.body());
            // a finish in the middle does not end it: only the body's end right after one does
            HttpResponse<String> open = Http.post(server.base() + "/v1/runs/ui-4/events", "application/x-ndjson",
                    "{\"type\":\"finish\"}\n{\"type\":\"start\"}\n", "Authorization", auth,
                    "x-vercel-ai-ui-message-stream", "v1");
            assertTrue(open.body().endsWith("\"ended\":false}"), open.body());
            HttpResponse<String> read = Http.get(server.base() + "/v1/runs/ui-3/events", "Authorization", auth);
            assertTrue(read.body().endsWith("data: {\"type\":\"finish\"}\n\n" + DONE), read.body());
        }
    }

    @Test
    void aStopEndsReadersWithAbortThenDoneAndAnswersThePublisher() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "ui-5", "text/event-stream", admin,
                    HEADER);
            pub.send("data: {\"type\":\"start\"}\n\ndata: {\"type\":\"text-start\",\"id\":\"t\"}\n\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/ui-5/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals("v1", sub.header("x-vercel-ai-ui-message-stream"));
                assertEquals(2, sub.take(2, 5000).size());
                HttpResponse<String> stop = Http.delete(server.base() + "/v1/runs/ui-5", "Authorization",
                        "Bearer " + admin);
                assertEquals(200, stop.statusCode(), stop.body());
                SseClient.Event abort = sub.next(5000);
                assertEquals("3", abort.id());
                assertEquals("{\"type\":\"abort\",\"reason\":\"run stopped (STOPPED)\"}", abort.data());
                assertEquals("[DONE]", sub.next(5000).data());
                assertTrue(sub.awaitEnd(5000));
            }
            ChunkedPublisher.Reply answer = pub.readReply();
            assertEquals(409, answer.status(), answer.body());
            assertTrue(answer.body().startsWith("{\"error\":\"run_stopped\""), answer.body());
            pub.close();
        }
    }

    @Test
    void aLostPublisherEndsReadersWithAnErrorChunkNeverAnAgUiEvent() throws Exception {
        try (TestServer server = TestServer.start("--publisher-timeout", "200ms")) {
            String admin = Tokens.admin();
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "ui-6", "application/x-ndjson", admin,
                    HEADER);
            pub.send("{\"type\":\"start\"}\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/ui-6/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals(1, sub.take(1, 5000).size());
                pub.breakOff();
                SseClient.Event error = sub.next(5000);
                assertEquals("{\"type\":\"error\",\"errorText\":\"publisher disconnected (PUBLISHER_LOST)\"}",
                        error.data());
                assertFalse(error.data().contains("RUN_ERROR"));
                assertEquals("[DONE]", sub.next(5000).data());
                assertTrue(sub.awaitEnd(5000));
            }
        }
    }

    @Test
    void aLapsedPublisherLeaseEndsTheRunWithAnErrorChunk() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "ui-11", "text/event-stream", admin,
                    HEADER, "X-IQStream-Publisher-Lease: 300ms");
            pub.send("data: {\"type\":\"start\"}\n\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/ui-11/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals(1, sub.take(1, 5000).size());
                pub.breakOff();
                // within 5 s: the lease's 300 ms, not --publisher-timeout's 30 s
                SseClient.Event error = sub.next(5000);
                assertEquals("{\"type\":\"error\",\"errorText\":\"publisher disconnected (PUBLISHER_LOST)\"}",
                        error.data());
                assertEquals("[DONE]", sub.next(5000).data());
                assertTrue(sub.awaitEnd(5000));
            }
        }
    }

    @Test
    void aTailReadOfAnOpenRunEndsWithoutDoneAndOfAnEndedOneWithIt() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            String auth = "Bearer " + admin;
            Http.post(server.base() + "/v1/runs/ui-12/events", "text/event-stream", "data: {\"type\":\"start\"}\n\n",
                    "Authorization", auth, "x-vercel-ai-ui-message-stream", "v1");
            HttpResponse<String> open = Http.get(server.base() + "/v1/runs/ui-12/events?live=false",
                    "Authorization", auth);
            assertEquals(200, open.statusCode());
            assertTrue(open.body().endsWith("id: 1\ndata: {\"type\":\"start\"}\n\n"), open.body());
            assertFalse(open.body().contains("[DONE]"), "the run goes on: no [DONE] yet");
            Http.post(server.base() + "/v1/runs/ui-12/events", "text/event-stream", DONE, "Authorization", auth,
                    "x-vercel-ai-ui-message-stream", "v1");
            HttpResponse<String> ended = Http.get(server.base() + "/v1/runs/ui-12/events?live=false",
                    "Authorization", auth);
            assertTrue(ended.body().endsWith("id: 1\ndata: {\"type\":\"start\"}\n\n" + DONE), ended.body());
        }
    }

    @Test
    void refusesAnUnknownVersionAMixedRunABadChunkAndChunksAfterDone() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            String auth = "Bearer " + admin;
            String base = server.base() + "/v1/runs/";
            HttpResponse<String> v2 = Http.post(base + "ui-7/events", "application/x-ndjson", "{\"type\":\"start\"}\n",
                    "Authorization", auth, "x-vercel-ai-ui-message-stream", "v2");
            assertEquals(400, v2.statusCode());
            assertTrue(v2.body().startsWith("{\"error\":\"unsupported_protocol\""), v2.body());
            assertEquals(404, Http.get(base + "ui-7", "Authorization", auth).statusCode(), "no run was made");

            Http.post(base + "ui-8/events", "application/x-ndjson", "{\"type\":\"start\"}\n", "Authorization", auth,
                    "x-vercel-ai-ui-message-stream", "v1");
            HttpResponse<String> agui = Http.publish(server.base(), "ui-8", admin, "{\"type\":\"TEXT\"}");
            assertEquals(409, agui.statusCode());
            assertTrue(agui.body().startsWith("{\"error\":\"protocol_mismatch\""), agui.body());

            HttpResponse<String> bad = Http.post(base + "ui-9/events", "text/event-stream",
                    "data: {\"type\":\"start\"}\n\ndata: {\"delta\":\"no type\"}\n\n", "Authorization", auth,
                    "x-vercel-ai-ui-message-stream", "v1");
            assertEquals(400, bad.statusCode());
            assertTrue(bad.body().startsWith("{\"error\":\"missing_type\""), bad.body());
            assertTrue(bad.body().contains("\"position\":2"), bad.body());

            HttpResponse<String> after = Http.post(base + "ui-10/events", "text/event-stream",
                    "data: {\"type\":\"start\"}\n\n" + DONE + "data: {\"type\":\"start\"}\n\n", "Authorization",
                    auth, "x-vercel-ai-ui-message-stream", "v1");
            assertEquals(409, after.statusCode());
            assertTrue(after.body().contains("\"position\":3"), after.body());
        }
    }

    @Test
    void theVersionIsExactlyV1() throws Exception {
        try (TestServer server = TestServer.start()) {
            String auth = "Bearer " + Tokens.admin();
            String base = server.base() + "/v1/runs/";
            for (String version : List.of("V1", "v1.0", "v01")) {
                HttpResponse<String> r = Http.post(base + "ui-v/events", "application/x-ndjson",
                        "{\"type\":\"start\"}\n", "Authorization", auth, "x-vercel-ai-ui-message-stream", version);
                assertEquals(400, r.statusCode(), version + ": " + r.body());
                assertTrue(r.body().startsWith("{\"error\":\"unsupported_protocol\""), r.body());
            }
            // the whitespace HTTP allows around any field value is not part of it (raw bytes: no client trims)
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
                String body = "{\"type\":\"start\"}\n";
                s.getOutputStream().write(("POST /v1/runs/ui-ows/events HTTP/1.1\r\nHost: x\r\nAuthorization: " + auth
                        + "\r\nContent-Type: application/x-ndjson\r\nx-vercel-ai-ui-message-stream: \tv1 \r\n"
                        + "Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body)
                        .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            }
            HttpResponse<String> status = Http.get(base + "ui-ows", "Authorization", auth);
            assertTrue(status.body().contains("\"protocol\":\"ui-message-stream\""), status.body());

        }
    }

    @Test
    void ndjsonHasNoDone() throws Exception {
        try (TestServer server = TestServer.start()) {
            String auth = "Bearer " + Tokens.admin();
            String base = server.base() + "/v1/runs/";
            // NDJSON has no [DONE] (docs/API.md): the line is no end marker but a chunk that is not an object
            HttpResponse<String> done = Http.post(base + "ui-nd/events", "application/x-ndjson",
                    "{\"type\":\"start\"}\n[DONE]\n", "Authorization", auth, "x-vercel-ai-ui-message-stream", "v1");
            assertEquals(400, done.statusCode(), done.body());
            assertTrue(done.body().startsWith("{\"error\":\"bad_event\""), done.body());
        }
    }

    @Test
    void anAgUiRunIsFramedAsBefore() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "ag-1", admin, "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}",
                    "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}");
            HttpResponse<String> read = Http.get(server.base() + "/v1/runs/ag-1/events", "Authorization",
                    "Bearer " + admin);
            assertNull(read.headers().firstValue("x-vercel-ai-ui-message-stream").orElse(null));
            assertTrue(read.body().endsWith("id: 2\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}"
                    + "\n\n"), read.body());
            // in an AG-UI run [DONE] is no end marker but an event that is not an object
            HttpResponse<String> done = Http.post(server.base() + "/v1/runs/ag-2/events", "text/event-stream",
                    "data: [DONE]\n\n", "Authorization", "Bearer " + admin);
            assertEquals(400, done.statusCode());
            assertTrue(done.body().startsWith("{\"error\":\"bad_event\""), done.body());
        }
    }
}
