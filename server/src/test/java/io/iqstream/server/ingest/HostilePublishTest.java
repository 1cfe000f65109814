package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Publishers that mean harm, against the real server: bodies that would make it hold unbounded partial events,
 * malformed element kinds, invalid UTF-8, duplicate types, byte order marks. Each answer names the bad event's
 * position, the events before it stay, nothing after it is taken, and an honest run streamed meanwhile is whole.
 */
class HostilePublishTest {
    static TestServer server;
    static String admin;
    static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void start() {
        server = TestServer.start("--max-event-bytes", "4k", "--max-run-bytes", "1m");
        admin = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static String ev(String type) {
        return "{\"type\":\"" + type + "\"}";
    }

    static HttpResponse<String> postBytes(TestServer s, String runId, String contentType, byte[] body)
            throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(s.base() + "/v1/runs/" + runId + "/events"))
                .header("Content-Type", contentType).header("Authorization", "Bearer " + admin)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        return CLIENT.send(req, HttpResponse.BodyHandlers.ofString());
    }

    static byte[] concat(Object... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Object p : parts) {
            byte[] b = p instanceof byte[] raw ? raw : ((String) p).getBytes(StandardCharsets.UTF_8);
            out.writeBytes(b);
        }
        return out.toByteArray();
    }

    static int events(TestServer s, String runId) throws Exception {
        HttpResponse<String> r = Http.get(s.base() + "/v1/runs/" + runId, "Authorization", "Bearer " + admin);
        assertEquals(200, r.statusCode(), r.body());
        return Integer.parseInt(r.body().replaceAll(".*\"events\":(\\d+).*", "$1"));
    }

    static void assertError(HttpResponse<String> r, int status, String code, int position, int lastEventId) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"error\":\"" + code + "\""), r.body());
        assertTrue(r.body().contains("\"position\":" + position + ","), r.body());
        assertTrue(r.body().contains("\"lastEventId\":" + lastEventId), r.body());
    }

    @Test
    void nestedArrayElementIs400BadEventAndNothingAfterItIsTaken() throws Exception {
        HttpResponse<String> r = postBytes(server, "nested-1", "application/json",
                concat("[" + ev("A") + ",[" + ev("N1") + "]," + ev("TOP") + "]"));
        assertError(r, 400, "bad_event", 2, 1);
        assertEquals(1, events(server, "nested-1"));
        assertError(postBytes(server, "nested-2", "application/json", concat("[[[]]]")), 400, "bad_event", 1, 0);
        assertError(postBytes(server, "nested-3", "application/json", concat("[" + ev("A") + ",\"s\"]")), 400,
                "bad_event", 2, 1);
    }

    @Test
    void prettyPrintedArrayIsTakenWhole() throws Exception {
        String pretty = "[\n  {\n    \"type\": \"RUN_STARTED\",\n    \"threadId\": \"t\"\n  },\n  {\n"
                + "    \"type\": \"TEXT_MESSAGE_CONTENT\",\n    \"delta\": \"a ]} \\\" b\"\n  },\n  {\n"
                + "    \"type\": \"RUN_FINISHED\"\n  }\n]";
        HttpResponse<String> r = postBytes(server, "pretty", "application/json", concat(pretty));
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"runId\":\"pretty\",\"lastEventId\":3,\"ended\":true}", r.body());
        try (SseClient sub = SseClient.open(server.port(), "/v1/runs/pretty/events", "Authorization: Bearer "
                + admin)) {
            List<SseClient.Event> got = sub.take(3, 5000);
            assertEquals("{     \"type\": \"TEXT_MESSAGE_CONTENT\",     \"delta\": \"a ]} \\\" b\"   }",
                    got.get(1).data());
        }
    }

    @Test
    void duplicateTypeIs400BadEvent() throws Exception {
        HttpResponse<String> r = postBytes(server, "dup-type", "application/x-ndjson", concat(ev("RUN_STARTED")
                + "\n{\"type\":\"TEXT_MESSAGE_CONTENT\",\"type\":\"RUN_FINISHED\"}\n" + ev("LATE") + "\n"));
        assertError(r, 400, "bad_event", 2, 1);
        HttpResponse<String> status = Http.get(server.base() + "/v1/runs/dup-type", "Authorization",
                "Bearer " + admin);
        assertTrue(status.body().contains("\"ended\":false"), "the run was not ended by the second type");
        assertEquals(1, events(server, "dup-type"));
    }

    @Test
    void invalidUtf8Is400BadEventInEveryFormat() throws Exception {
        String[] bad = {"c08a", "eda080", "f4908080", "e282"};
        int n = 0;
        for (String hex : bad) {
            byte[] raw = HexFormat.of().parseHex(hex);
            String run = "utf8-" + n++;
            HttpResponse<String> r = postBytes(server, run, "application/x-ndjson", concat(ev("A") + "\n",
                    "{\"type\":\"B\",\"d\":\"", raw, "\"}\n", ev("C") + "\n"));
            assertError(r, 400, "bad_event", 2, 1);
            assertEquals(1, events(server, run), hex);
            r = postBytes(server, run + "-sse", "text/event-stream", concat("data: " + ev("A") + "\n\n",
                    "data: {\"type\":\"B\",\"d\":\"", raw, "\"}\n\n"));
            assertError(r, 400, "bad_event", 2, 1);
            r = postBytes(server, run + "-json", "application/json", concat("[" + ev("A") + ",",
                    "{\"type\":\"B\",\"", raw, "\":1}]"));
            assertError(r, 400, "bad_event", 2, 1);
        }
    }

    @Test
    void byteOrderMarkAtTheStartOfABodyIsSkippedInEveryFormat() throws Exception {
        byte[] bom = HexFormat.of().parseHex("efbbbf");
        assertEquals(200, postBytes(server, "bom-nd", "application/x-ndjson", concat(bom, ev("A") + "\n"))
                .statusCode());
        assertEquals(200, postBytes(server, "bom-sse", "text/event-stream", concat(bom, "data: " + ev("A")
                + "\n\ndata: " + ev("B") + "\n\n")).statusCode());
        assertEquals(200, postBytes(server, "bom-json", "application/json", concat(bom, "[" + ev("A") + "]"))
                .statusCode());
        assertEquals(2, events(server, "bom-sse"), "the first SSE frame is kept");
        for (String run : List.of("bom-nd", "bom-sse", "bom-json")) {
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/" + run + "/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals(ev("A"), sub.next(5000).data(), run + ": no BOM relayed");
            }
        }
    }

    @Test
    void unterminatedStringElementIsRefusedAtItsFirstByte() throws Exception {
        try (ChunkedPublisher honest = ChunkedPublisher.open(server.port(), "honest-str", "application/x-ndjson",
                admin);
                ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "evil-str", "application/json", admin)) {
            honest.send(ev("RUN_STARTED") + "\n");
            pub.send("[" + ev("A") + ",\"");
            try {
                pub.send("a".repeat(8000));
            } catch (java.net.SocketException answeredAndClosedFirst) {
                // refused at the string's first byte: the reply may be written and the socket closed before
                // the rest arrives; what matters is that reply
            }
            ChunkedPublisher.Reply reply = pub.readReply();
            assertEquals(400, reply.status(), reply.body());
            assertTrue(reply.body().contains("\"error\":\"bad_event\"") && reply.body().contains("\"position\":2"),
                    reply.body());
            honest.send(ev("RUN_FINISHED") + "\n");
            assertEquals(200, honest.finish().status());
        }
        assertEquals(1, events(server, "evil-str"));
        assertEquals(2, events(server, "honest-str"));
    }

    @Test
    void oversizeEventSpanningChunksIs413BeforeItEndsInEveryFormat() throws Exception {
        String[][] cases = {
            {"application/x-ndjson", ev("A") + "\n", "{\"type\":\"B\",\"d\":\""},
            {"text/event-stream", "data: " + ev("A") + "\n\n", "data: {\"type\":\"B\",\"d\":\""},
            {"application/json", "[" + ev("A") + ",", "{\"type\":\"B\",\"d\":\""}};
        for (String[] k : cases) {
            String run = "big-" + k[0].replace('/', '-');
            try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), run, k[0], admin)) {
                pub.send(k[1]).send(k[2]);
                for (int i = 0; i < 5; i++) {
                    pub.send("x".repeat(1000)); // past the 4k cap on the fifth chunk; the event never ends
                }
                ChunkedPublisher.Reply reply = pub.readReply();
                assertEquals(413, reply.status(), k[0] + " " + reply.body());
                assertTrue(reply.body().contains("\"position\":2,"), reply.body());
            }
            assertEquals(1, events(server, run), k[0]);
        }
    }

    @Test
    void partialEventsBeyondTheBudgetGet503AndTheChargeIsGivenBack() throws Exception {
        try (TestServer small = TestServer.start("--memory-budget", "4m", "--max-event-bytes", "1m")) {
            MemoryBudget budget = small.server().context().budget();
            try (ChunkedPublisher honest = ChunkedPublisher.open(small.port(), "honest", "application/x-ndjson",
                    admin);
                    SseClient sub = SseClient.open(small.port(), "/v1/runs/honest/events",
                            "Authorization: Bearer " + admin)) {
                honest.send(ev("RUN_STARTED") + "\n");
                assertEquals("1", sub.next(5000).id());
                long before = budget.committedBytes();
                List<RawPublisher> evil = new ArrayList<>();
                ChunkedPublisher.Reply refused = null;
                try {
                    for (int i = 0; i < 12 && refused == null; i++) {
                        RawPublisher p = new RawPublisher(small.port(), "evil-" + i, "application/x-ndjson");
                        evil.add(p);
                        p.send("{\"type\":\"X\",\"d\":\"");
                        for (int k = 0; k < 15; k++) {
                            p.send("y".repeat(64 * 1000)); // 0.96 MB, under the 1 MiB cap, never ended
                        }
                        honest.send("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"" + i + "\"}\n");
                        refused = p.replyWithin(3000);
                    }
                    assertNotNull(refused, "some partial event must be refused by the budget");
                    assertEquals(503, refused.status(), refused.body());
                    assertTrue(refused.body().contains("\"error\":\"over_budget\""), refused.body());
                    assertEquals("1", refused.header("Retry-After"));
                    assertTrue(budget.committedBytes() <= budget.budgetBytes() + budget.budgetBytes() / 4);
                } finally {
                    for (RawPublisher p : evil) {
                        p.close();
                    }
                }
                honest.send(ev("RUN_FINISHED") + "\n");
                assertEquals(200, honest.finish().status());
                List<SseClient.Event> rest = sub.take(evil.size() + 1, 10_000);
                SseClient.assertConsecutive(rest, 2);
                assertEquals(ev("RUN_FINISHED"), rest.get(rest.size() - 1).data());
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (budget.committedBytes() > before + evil.size() * MemoryBudget.INITIAL_EXPECTED_RUN_BYTES * 2
                        && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertTrue(budget.committedBytes() <= before + evil.size() * MemoryBudget.INITIAL_EXPECTED_RUN_BYTES
                        * 2, "partial events' charge given back: " + budget.committedBytes());
            }
        }
    }

    /** A chunked publisher whose reply can be awaited for a bounded time (a refusal), or not at all. */
    private static final class RawPublisher implements AutoCloseable {
        private final java.net.Socket socket;
        private final java.io.OutputStream out;
        private final java.io.InputStream in;

        RawPublisher(int port, String runId, String contentType) throws IOException {
            socket = new java.net.Socket("127.0.0.1", port);
            out = socket.getOutputStream();
            in = new java.io.BufferedInputStream(socket.getInputStream());
            out.write(("POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: x\r\nContent-Type: " + contentType
                    + "\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer " + admin + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
        }

        void send(String text) throws IOException {
            byte[] b = text.getBytes(StandardCharsets.UTF_8);
            out.write((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }

        /** The reply if the server answered within {@code waitMs}, else null (it is still reading). */
        ChunkedPublisher.Reply replyWithin(int waitMs) throws IOException {
            socket.setSoTimeout(waitMs);
            String statusLine;
            try {
                statusLine = line();
            } catch (java.net.SocketTimeoutException e) {
                return null;
            }
            java.util.Map<String, String> headers = new java.util.LinkedHashMap<>();
            for (String h = line(); !h.isEmpty(); h = line()) {
                int colon = h.indexOf(':');
                headers.put(h.substring(0, colon).trim(), h.substring(colon + 1).trim());
            }
            String length = headers.getOrDefault("content-length", headers.get("Content-Length"));
            String body = length == null ? "" : new String(in.readNBytes(Integer.parseInt(length)),
                    StandardCharsets.UTF_8);
            return new ChunkedPublisher.Reply(Integer.parseInt(statusLine.split(" ")[1]), body, headers);
        }

        private String line() throws IOException {
            StringBuilder sb = new StringBuilder();
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new java.io.EOFException();
                }
                if (c != '\r') {
                    sb.append((char) c);
                }
            }
            return sb.toString();
        }

        @Override
        public void close() throws IOException {
            socket.setSoLinger(true, 0);
            socket.close();
        }
    }

    @Test
    void publisherThatSendsNoEventEndsItsRunWithRunIdleAnd408() throws Exception {
        try (TestServer quick = TestServer.start("--run-idle-timeout", "1s")) {
            for (String ct : List.of("application/x-ndjson", "text/event-stream", "application/json")) {
                String run = "idle-" + ct.replace('/', '-');
                try (ChunkedPublisher pub = ChunkedPublisher.open(quick.port(), run, ct, admin);
                        SseClient sub = SseClient.open(quick.port(), "/v1/runs/" + run + "/events",
                                "Authorization: Bearer " + admin)) {
                    // headers only, then a body that stalls inside an event: neither counts as activity
                    pub.send(ct.equals("text/event-stream") ? "data: {\"type\":" : "[{\"type\":"
                            .substring(ct.equals("application/json") ? 0 : 1));
                    ChunkedPublisher.Reply reply = pub.readReply();
                    assertEquals(408, reply.status(), reply.body());
                    assertTrue(reply.body().contains("\"error\":\"run_idle\"")
                            && reply.body().contains("\"lastEventId\":1"), reply.body());
                    assertEquals("close", reply.header("Connection"));
                    SseClient.Event end = sub.next(5000);
                    assertTrue(end.data().contains("\"type\":\"RUN_ERROR\"") && end.data().contains("RUN_IDLE"),
                            end.data());
                    assertTrue(sub.awaitEnd(5000));
                }
                HttpResponse<String> second = Http.publish(quick.base(), run, admin, ev("X"));
                assertEquals(409, second.statusCode());
                assertTrue(second.body().contains("\"error\":\"run_ended\""), second.body());
            }
            try (ChunkedPublisher headersOnly = ChunkedPublisher.open(quick.port(), "idle-head",
                    "application/x-ndjson", admin)) {
                ChunkedPublisher.Reply reply = headersOnly.readReply(); // no body byte was ever sent
                assertEquals(408, reply.status(), reply.body());
                assertTrue(reply.body().contains("\"error\":\"run_idle\""), reply.body());
            }
            HttpResponse<String> status = Http.get(quick.base() + "/v1/runs/idle-head", "Authorization",
                    "Bearer " + admin);
            assertTrue(status.body().contains("\"ended\":true"), status.body());
        }
    }

    @Test
    void blankLinesAndCommentsKeepAPublishingRequestAlive() throws Exception {
        try (TestServer quick = TestServer.start("--run-idle-timeout", "1s")) {
            for (String ct : List.of("application/x-ndjson", "text/event-stream")) {
                String run = "alive-" + ct.replace('/', '-');
                String keep = ct.equals("text/event-stream") ? ": hb\n" : "\n";
                String frame = ct.equals("text/event-stream") ? "data: %s\n\n" : "%s\n";
                try (ChunkedPublisher pub = ChunkedPublisher.open(quick.port(), run, ct, admin)) {
                    pub.send(String.format(frame, ev("RUN_STARTED")));
                    long until = System.nanoTime() + 3_000_000_000L; // three idle timeouts of keep-alives only
                    while (System.nanoTime() < until) {
                        pub.send(keep);
                        Thread.sleep(100);
                    }
                    pub.send(String.format(frame, ev("RUN_FINISHED")));
                    ChunkedPublisher.Reply reply = pub.finish();
                    assertEquals(200, reply.status(), reply.body());
                    assertTrue(reply.body().contains("\"lastEventId\":2,\"ended\":true"), reply.body());
                }
            }
        }
    }
}
