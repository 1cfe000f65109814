package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Requests the decoder or the target parser cannot read: each is 400 with the JSON body, then closed. */
class MalformedRequestTest {
    @Test
    void badChunkSizeInAPublishBodyIs400AndClosed() throws Exception {
        try (TestServer server = TestServer.start()) {
            String token = Tokens.admin();
            int n = 0;
            for (String size : List.of("zzzz", "-1", "FFFFFFFFFFFFFFFFFF")) {
                String runId = "bad-chunk-" + n++;
                try (RawHttp conn = new RawHttp(server.port())) {
                    String event = "{\"type\":\"RUN_STARTED\"}\n";
                    conn.send("POST /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: x\r\n"
                            + "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
                            + "Authorization: Bearer " + token + "\r\n\r\n"
                            + Integer.toHexString(event.length()) + "\r\n" + event + "\r\n"
                            + size + "\r\n{\"type\":\"RUN_FINISHED\"}\n\r\n0\r\n\r\n");
                    RawHttp.Reply reply = conn.readReply();
                    assertEquals(400, reply.status(), size + ": " + reply.body());
                    assertTrue(reply.body().contains("\"error\":\"bad_request\""), reply.body());
                    assertEquals("close", reply.header("Connection"));
                    assertTrue(conn.closedByServer(), size + ": closed after the 400");
                }
                String status = Http.get(server.base() + "/v1/runs/" + runId, "Authorization", "Bearer " + token)
                        .body();
                assertTrue(status.contains("\"lastEventId\":1"), "the event before the bad chunk stays: " + status);
                assertTrue(!status.contains("\"publishing\":true"), "the publisher is detached: " + status);
            }
        }
    }

    @Test
    void badHeaderLinesAre400AndClosed() throws Exception {
        try (TestServer server = TestServer.start()) {
            for (String head : List.of(
                    "GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
                    "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + "a".repeat(20_000) + "\r\n\r\n",
                    "GET /" + "a".repeat(10_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
                    "GET /healthz HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab")) {
                try (RawHttp conn = new RawHttp(server.port())) {
                    conn.send(head);
                    RawHttp.Reply reply = conn.readReply();
                    assertEquals(400, reply.status(), head.substring(0, 40));
                    assertTrue(reply.body().contains("\"error\":\"bad_request\""), reply.body());
                    assertTrue(conn.closedByServer());
                }
            }
        }
    }

    @Test
    void badPercentEncodingIs400() throws Exception {
        try (TestServer server = TestServer.start()) {
            String token = Tokens.admin();
            for (String target : List.of("/healthz%ZZ", "/v1/runs/r%/events", "/v1/runs/r%4/events",
                    "/v1/runs/r/events?access_token=%ZZ", "/v1/runs/r/events?lastEventId=%ZZ",
                    "/v1/runs/r%C0%8A/events", "/metrics?x=%")) {
                try (RawHttp conn = new RawHttp(server.port())) {
                    conn.send("GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                            + "\r\n\r\n");
                    RawHttp.Reply reply = conn.readReply();
                    assertEquals(400, reply.status(), target);
                    assertTrue(reply.body().contains("\"error\":\"bad_request\""), target + ": " + reply.body());
                    assertTrue(conn.closedByServer(), target);
                }
            }
        }
    }

    @Test
    void encodedSlashInARunIdIsABadRunId() throws Exception {
        try (TestServer server = TestServer.start()) {
            for (String target : List.of("/v1/runs/a%2Fb/events", "/v1/runs/a%2fb", "/v1/runs/a%20b/events")) {
                try (RawHttp conn = new RawHttp(server.port())) {
                    conn.send("GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + Tokens.admin()
                            + "\r\n\r\n");
                    RawHttp.Reply reply = conn.readReply();
                    assertEquals(400, reply.status(), target);
                    assertTrue(reply.body().contains("\"error\":\"bad_run_id\""), target + ": " + reply.body());
                }
            }
            // a well-formed escape of an allowed character names the same run
            String admin = Tokens.admin();
            Http.publish(server.base(), "enc-1", admin, "{\"type\":\"RUN_STARTED\"}");
            assertEquals(200, Http.get(server.base() + "/v1/runs/enc%2D1", "Authorization", "Bearer " + admin)
                    .statusCode());
        }
    }
}
