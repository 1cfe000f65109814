package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 8, items 4, 6, 7, 8, 9, 10, 11 and 12: malformed or malicious HTTP and event bodies sent over raw
 * sockets to the real server. Each gets the status the contract names (never a 200 for a body that failed to
 * decode, never a hang, never a dropped connection without an answer), while an honest run streams beside it and
 * /healthz keeps answering. One server for the class, started again if an attack killed it.
 */
class HostileProtocolTest {
    private static final String RUN_IDLE = "3s";
    private static final long RUN_IDLE_MS = 3_000;
    private static HostileServer server;
    private static int seq;

    private final String token = Tokens.admin();

    @BeforeEach
    void serverRunning() throws Exception {
        if (server == null || !server.isAlive()) {
            if (server != null) {
                server.close();
            }
            server = HostileServer.start("--run-idle-timeout", RUN_IDLE, "--await-run", "2s");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    // item 4

    @Test
    void lastEventIdAtIntMaxOnAnEndedRunAnswers204OnEveryWorker() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            for (int i = 0; i < 6; i++) {
                String run = publishEndedRun(3);
                RawHttp.Response header = RawHttp.get(port(), "/v1/runs/" + run + "/events", auth(),
                        "Last-Event-ID: 2147483647");
                assertEquals(204, header.status(), "Last-Event-ID 2147483647 on ended " + run + ": " + header);
                RawHttp.Response query = RawHttp.get(port(), "/v1/runs/" + run + "/events?lastEventId=2147483647",
                        auth());
                assertEquals(204, query.status(), "lastEventId=2147483647 on ended " + run + ": " + query);
                for (String tooBig : new String[] {"2147483648", "9223372036854775807", "99999999999999999999", "-1"}) {
                    RawHttp.Response r = RawHttp.get(port(), "/v1/runs/" + run + "/events", auth(),
                            "Last-Event-ID: " + tooBig);
                    assertEquals(400, r.status(), "Last-Event-ID " + tooBig + ": " + r);
                    assertEquals("bad_last_event_id", r.error(), r.toString());
                }
            }
            w.assertSurvived();
        }
    }

    @Test
    void lastEventIdBeyondAnOpenRunIs400() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = nextRun();
            try (Socket pub = RawHttp.connect(port())) {
                RawHttp.write(pub, RawHttp.publishHead(run, "application/x-ndjson", token));
                RawHttp.write(pub, RawHttp.chunk("{\"type\":\"RUN_STARTED\"}\n{\"type\":\"STEP_STARTED\"}\n"));
                awaitEvents(run, 2);
                for (String beyond : new String[] {"3", "2147483647"}) {
                    RawHttp.write(pub, RawHttp.chunk("\n")); // activity, so --run-idle-timeout cannot end the run
                    RawHttp.Response r = RawHttp.get(port(), "/v1/runs/" + run + "/events", auth(),
                            "Last-Event-ID: " + beyond);
                    assertEquals(400, r.status(), "Last-Event-ID " + beyond + " on an open run of 2: " + r);
                    assertEquals("bad_last_event_id", r.error(), r.toString());
                }
                RawHttp.write(pub, RawHttp.chunk("{\"type\":\"RUN_FINISHED\"}\n"));
                RawHttp.write(pub, "0\r\n\r\n");
                assertEquals(200, RawHttp.read(pub, 10_000).status());
            }
            w.assertSurvived();
        }
    }

    // item 6

    @Test
    void publisherThatSendsOnlyHeadersIsAnswered408RunIdleAndFreesTheRun() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = nextRun();
            try (Socket silent = RawHttp.connect(port())) {
                RawHttp.write(silent, RawHttp.publishHead(run, "application/x-ndjson", token));
                RawHttp.Response r = RawHttp.read(silent, RUN_IDLE_MS + 8_000);
                assertEquals(408, r.status(), "a silent publisher: " + r);
                assertEquals("run_idle", r.error(), r.toString());
                assertTrue(RawHttp.awaitClosed(silent, 5_000), "the silent publisher's connection was closed");
            }
            RawHttp.Response second = RawHttp.exchange(port(), RawHttp.publish(run, "application/x-ndjson", token,
                    "{\"type\":\"RUN_STARTED\"}\n".getBytes(StandardCharsets.UTF_8)), 10_000);
            assertNotEquals("publisher_active", second.error(), "a second publisher after the idle one: " + second);
            w.assertSurvived();
        }
    }

    @Test
    void publisherSilentAfterAnEventEndsTheRunWithRunIdle() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = nextRun();
            try (Socket silent = RawHttp.connect(port()); Socket reader = RawHttp.connect(port())) {
                RawHttp.write(silent, RawHttp.publishHead(run, "application/x-ndjson", token));
                RawHttp.write(silent, RawHttp.chunk("{\"type\":\"RUN_STARTED\"}\n"));
                awaitEvents(run, 1);
                RawHttp.write(reader, "GET /v1/runs/" + run + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + auth() + "\r\n\r\n");
                RawHttp.Response r = RawHttp.read(silent, RUN_IDLE_MS + 8_000);
                assertEquals(408, r.status(), "a publisher silent after one event: " + r);
                assertEquals("run_idle", r.error(), r.toString());
                // the RUN_ERROR appended by the server is event 2: the reply names the run's last event
                assertTrue(r.text().contains("\"lastEventId\":2"), r.toString());
                RawHttp.Response stream = RawHttp.read(reader, 10_000);
                assertTrue(stream.terminalChunk(), "the subscriber's stream ended: " + stream);
                assertTrue(stream.text().contains("RUN_ERROR") && stream.text().contains("RUN_IDLE"), stream.text());
            }
            w.assertSurvived();
        }
    }

    @Test
    void blankLinesAndCommentsKeepAPublishAlivePastRunIdleTimeout() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String[][] kinds = {{"application/x-ndjson", "{\"type\":\"RUN_STARTED\"}\n", "\n",
                "{\"type\":\"RUN_FINISHED\"}\n"}, {"text/event-stream", "data: {\"type\":\"RUN_STARTED\"}\n\n",
                ": working\n\n", "data: {\"type\":\"RUN_FINISHED\"}\n\n"}};
            for (String[] kind : kinds) {
                String run = nextRun();
                try (Socket pub = RawHttp.connect(port())) {
                    RawHttp.write(pub, RawHttp.publishHead(run, kind[0], token));
                    RawHttp.write(pub, RawHttp.chunk(kind[1]));
                    long until = System.nanoTime() + RUN_IDLE_MS * 3 / 2 * 1_000_000L;
                    while (System.nanoTime() < until) {
                        RawHttp.write(pub, RawHttp.chunk(kind[2]));
                        Thread.sleep(RUN_IDLE_MS / 8);
                    }
                    RawHttp.write(pub, RawHttp.chunk(kind[3]));
                    RawHttp.write(pub, "0\r\n\r\n");
                    RawHttp.Response r = RawHttp.read(pub, 10_000);
                    assertEquals(200, r.status(), kind[0] + " kept alive by keep-alive lines: " + r);
                    assertTrue(r.text().contains("\"lastEventId\":2,\"ended\":true"), r.toString());
                }
            }
            w.assertSurvived();
        }
    }

    // item 7

    @Test
    void invalidChunkSizeIsAnswered400AndClosed() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            for (String size : new String[] {"zzzz", "-1", "FFFFFFFFFFFFFFFFFF"}) {
                String run = nextRun();
                try (Socket s = RawHttp.connect(port())) {
                    RawHttp.write(s, RawHttp.publishHead(run, "application/x-ndjson", token));
                    RawHttp.write(s, RawHttp.chunk("{\"type\":\"RUN_STARTED\"}\n"));
                    RawHttp.write(s, size + "\r\n{\"type\":\"STEP_STARTED\"}\n\r\n");
                    RawHttp.Response r = RawHttp.read(s, 5_000);
                    assertEquals(400, r.status(), "chunk size " + size + ": " + r);
                    assertEquals("bad_request", r.error(), r.toString());
                    assertEquals("close", lower(r.header("Connection")), "chunk size " + size + ": " + r);
                    assertTrue(RawHttp.awaitClosed(s, 5_000), "closed after chunk size " + size);
                }
            }
            w.assertSurvived();
        }
    }

    /**
     * Issue 28: after the step-down (a publish body's data chunks read below the codec), data not ended by CRLF is
     * the codec's own error, 400 and closed, with the events before it kept; a chunk extension, upper-case hex and
     * trailers are handed to the codec and taken whole (200, every event appended).
     */
    @Test
    void aChunkNotEndedByCrlfAfterTheStepDownIsAnswered400AndClosed() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = nextRun();
            try (Socket s = RawHttp.connect(port())) {
                RawHttp.write(s, RawHttp.publishHead(run, "application/x-ndjson", token));
                RawHttp.write(s, RawHttp.chunk("{\"type\":\"RUN_STARTED\"}\n"));
                String event = "{\"type\":\"STEP_STARTED\"}\n";
                RawHttp.write(s, Integer.toHexString(event.length()) + "\r\n" + event + "XY");
                RawHttp.Response r = RawHttp.read(s, 5_000);
                assertEquals(400, r.status(), r.toString());
                assertEquals("bad_request", r.error(), r.toString());
                assertTrue(r.text().contains("CR LF"), "the codec's own message: " + r);
                assertTrue(RawHttp.awaitClosed(s, 5_000), "closed");
            }
            RawHttp.Response status = RawHttp.get(port(), "/v1/runs/" + run, "Authorization: Bearer " + token);
            assertTrue(status.text().contains("\"lastEventId\":2"), "both whole events kept: " + status);
            w.assertSurvived();
        }
    }

    @Test
    void extensionsUpperCaseHexAndTrailersAreTakenWhole() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = nextRun();
            String a = "{\"type\":\"RUN_STARTED\"}\n";
            String b = "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}\n";
            String c = "{\"type\":\"RUN_FINISHED\"}\n";
            try (Socket s = RawHttp.connect(port())) {
                RawHttp.write(s, RawHttp.publishHead(run, "application/x-ndjson", token));
                RawHttp.write(s, Integer.toHexString(a.length()).toUpperCase(java.util.Locale.ROOT) + "\r\n" + a
                        + "\r\n");
                RawHttp.write(s, Integer.toHexString(b.length()) + ";note=\"x\"\r\n" + b + "\r\n");
                RawHttp.write(s, "0" + Integer.toHexString(c.length()) + "\r\n" + c + "\r\n");
                RawHttp.write(s, "0\r\nX-Checksum: 1\r\n\r\n");
                RawHttp.Response r = RawHttp.read(s, 5_000);
                assertEquals(200, r.status(), r.toString());
                assertTrue(r.text().contains("\"lastEventId\":3") && r.text().contains("\"ended\":true"),
                        r.toString());
            }
            w.assertSurvived();
        }
    }

    // item 8

    @Test
    void nestedArraysAndNonObjectElementsAre400BadEvent() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String[] bodies = {"[[{\"type\":\"N1\"}],{\"type\":\"TOP\"}]", "[[[]]]", "[{\"type\":\"A\"},[]]",
                "[{\"type\":\"A\"},7]", "[\"x\"]"};
            for (String body : bodies) {
                RawHttp.Response r = publishBytes(nextRun(), "application/json", body.getBytes(StandardCharsets.UTF_8));
                assertEquals(400, r.status(), body + ": " + r);
                assertEquals("bad_event", r.error(), body + ": " + r);
            }
            w.assertSurvived();
        }
    }

    @Test
    void prettyPrintedJsonArrayIsTakenWhole() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String pretty = "[\n  {\n    \"type\": \"RUN_STARTED\",\n    \"threadId\": \"t\",\n    \"runId\": \"r\"\n  },\n"
                    + "  {\n    \"type\": \"TEXT_MESSAGE_CONTENT\",\n    \"messageId\": \"m\",\n    \"delta\": \"hi\"\n  },\n"
                    + "  {\n    \"type\": \"RUN_FINISHED\",\n    \"threadId\": \"t\",\n    \"runId\": \"r\"\n  }\n]";
            RawHttp.Response whole = publishBytes(nextRun(), "application/json", pretty.getBytes(StandardCharsets.UTF_8));
            assertEquals(200, whole.status(), "pretty-printed array in one body: " + whole);
            assertTrue(whole.text().contains("\"lastEventId\":3,\"ended\":true"), whole.toString());
            String run = nextRun();
            try (Socket s = RawHttp.connect(port())) {
                RawHttp.write(s, RawHttp.publishHead(run, "application/json", token));
                for (String line : pretty.split("(?<=\n)")) {
                    RawHttp.write(s, RawHttp.chunk(line));
                }
                RawHttp.write(s, "0\r\n\r\n");
                RawHttp.Response chunked = RawHttp.read(s, 10_000);
                assertEquals(200, chunked.status(), "pretty-printed array chunked by line: " + chunked);
                assertTrue(chunked.text().contains("\"lastEventId\":3,\"ended\":true"), chunked.toString());
            }
            w.assertSurvived();
        }
    }

    // item 9

    @Test
    void badPercentEncodingIs400AndAnEncodedSlashInARunIdIsBadRunId() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = publishEndedRun(2);
            String[][] cases = {{"/healthz%ZZ", "bad_request"}, {"/v1/runs/r%/events", "bad_request"},
                {"/v1/runs/" + run + "/events?access_token=%ZZ", "bad_request"},
                {"/v1/runs/" + run + "/events?lastEventId=%ZZ", "bad_request"},
                {"/v1/runs/r%G1/events", "bad_request"}, {"/v1/runs/a%2Fb/events", "bad_run_id"},
                {"/v1/runs/a%00b/events", "bad_run_id"}};
            for (String[] c : cases) {
                RawHttp.Response r = RawHttp.get(port(), c[0], auth());
                assertEquals(400, r.status(), c[0] + ": " + r);
                assertEquals(c[1], r.error(), c[0] + ": " + r);
            }
            w.assertSurvived();
        }
    }

    // item 10

    @Test
    void duplicateTypeKeysAre400BadEvent() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String dup = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"type\":\"RUN_FINISHED\"}";
            String run = nextRun();
            RawHttp.Response nd = publishBytes(run, "application/x-ndjson",
                    ("{\"type\":\"RUN_STARTED\"}\n" + dup + "\n").getBytes(StandardCharsets.UTF_8));
            assertEquals(400, nd.status(), "NDJSON duplicate type: " + nd);
            assertEquals("bad_event", nd.error(), nd.toString());
            assertTrue(nd.text().contains("\"position\":2"), nd.toString());
            RawHttp.Response status = RawHttp.get(port(), "/v1/runs/" + run, auth());
            assertTrue(status.text().contains("\"lastEventId\":1"), "the event before stays: " + status);
            RawHttp.Response json = publishBytes(nextRun(), "application/json",
                    ("[" + dup + "]").getBytes(StandardCharsets.UTF_8));
            assertEquals(400, json.status(), "JSON duplicate type: " + json);
            assertEquals("bad_event", json.error(), json.toString());
            RawHttp.Response sse = publishBytes(nextRun(), "text/event-stream",
                    ("data: " + dup + "\n\n").getBytes(StandardCharsets.UTF_8));
            assertEquals(400, sse.status(), "SSE duplicate type: " + sse);
            assertEquals("bad_event", sse.error(), sse.toString());
            w.assertSurvived();
        }
    }

    // item 11

    @Test
    void invalidUtf8Is400BadEvent() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            byte[][] bad = {{(byte) 0xC0, (byte) 0x8A}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {(byte) 0xFF},
                {(byte) 0xE2, (byte) 0x82}};
            for (byte[] seq : bad) {
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                body.writeBytes("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"x".getBytes(StandardCharsets.UTF_8));
                body.writeBytes(seq);
                body.writeBytes("y\"}\n".getBytes(StandardCharsets.UTF_8));
                RawHttp.Response r = publishBytes(nextRun(), "application/x-ndjson", body.toByteArray());
                assertEquals(400, r.status(), "invalid UTF-8 " + hex(seq) + ": " + r);
                assertEquals("bad_event", r.error(), r.toString());
            }
            w.assertSurvived();
        }
    }

    @Test
    void byteOrderMarkAtTheStartOfABodyIsSkippedInEveryFormat() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String[][] kinds = {{"application/x-ndjson", "{\"type\":\"RUN_STARTED\"}\n{\"type\":\"RUN_FINISHED\"}\n"},
                {"text/event-stream", "data: {\"type\":\"RUN_STARTED\"}\n\ndata: {\"type\":\"RUN_FINISHED\"}\n\n"},
                {"application/json", "[{\"type\":\"RUN_STARTED\"},{\"type\":\"RUN_FINISHED\"}]"}};
            for (String[] kind : kinds) {
                String run = nextRun();
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                body.writeBytes(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF});
                body.writeBytes(kind[1].getBytes(StandardCharsets.UTF_8));
                RawHttp.Response r = publishBytes(run, kind[0], body.toByteArray());
                assertEquals(200, r.status(), kind[0] + " with a BOM: " + r);
                assertTrue(r.text().contains("\"lastEventId\":2,\"ended\":true"), kind[0] + " with a BOM: " + r);
                RawHttp.Response stream = RawHttp.get(port(), "/v1/runs/" + run + "/events", auth());
                assertTrue(stream.text().contains("\ndata: {\"type\":\"RUN_STARTED\"}\n"),
                        kind[0] + ": the first event relayed without the BOM: " + stream);
            }
            w.assertSurvived();
        }
    }

    // item 12

    @Test
    void http10SubscriberGetsAnHttp10StreamEndedByClose() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            String run = publishEndedRun(3);
            try (Socket s = RawHttp.connect(port())) {
                RawHttp.write(s, "GET /v1/runs/" + run + "/events HTTP/1.0\r\n" + auth() + "\r\n\r\n");
                RawHttp.Response r = RawHttp.read(s, 10_000);
                assertEquals(200, r.status(), r.toString());
                assertEquals("HTTP/1.0", r.version(), "the response's version: " + r);
                assertNull(r.header("Transfer-Encoding"), "no chunked encoding for HTTP/1.0: " + r);
                assertFalse(r.chunked());
                assertEquals(3, r.text().split("\nid: |^id: ", -1).length - 1, "three frames: " + r.text());
                assertTrue(r.text().contains("RUN_FINISHED"), r.text());
            }
            w.assertSurvived();
        }
    }

    // helpers

    private static int port() {
        return server.port();
    }

    private String auth() {
        return "Authorization: Bearer " + token;
    }

    private static String nextRun() {
        return "p" + (++seq) + "-" + Long.toHexString(System.nanoTime());
    }

    private RawHttp.Response publishBytes(String run, String contentType, byte[] body) throws Exception {
        return RawHttp.exchange(port(), RawHttp.publish(run, contentType, token, body), 10_000);
    }

    /** Publishes a run of {@code events} events ending with RUN_FINISHED and returns its id. */
    private String publishEndedRun(int events) throws Exception {
        String run = nextRun();
        StringBuilder body = new StringBuilder("{\"type\":\"RUN_STARTED\"}\n");
        for (int i = 2; i < events; i++) {
            body.append("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"").append(i).append("\"}\n");
        }
        body.append("{\"type\":\"RUN_FINISHED\"}\n");
        RawHttp.Response r = publishBytes(run, "application/x-ndjson", body.toString().getBytes(StandardCharsets.UTF_8));
        assertEquals(200, r.status(), "setting up " + run + ": " + r);
        return run;
    }

    private void awaitEvents(String run, int n) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            RawHttp.Response r = RawHttp.get(port(), "/v1/runs/" + run, auth());
            if (r.status() == 200 && r.text().contains("\"lastEventId\":" + n + ",")) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(run + " never reached " + n + " events");
    }

    private static String lower(String s) {
        return s == null ? null : s.toLowerCase(java.util.Locale.ROOT);
    }

    private static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) {
            sb.append(String.format("%02X ", x));
        }
        return sb.toString().trim();
    }
}
