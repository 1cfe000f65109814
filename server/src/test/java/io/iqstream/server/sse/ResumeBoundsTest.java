package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import org.junit.jupiter.api.Test;

/** Last-Event-ID at the edges of the id range, and subscribers speaking HTTP/1.0. */
class ResumeBoundsTest {
    private static final String FULL_RUN_1 = "{\"type\":\"RUN_STARTED\"}";
    private static final String FULL_RUN_2 = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"hi\"}";
    private static final String FULL_RUN_3 = "{\"type\":\"RUN_FINISHED\"}";

    @Test
    void largestLastEventIdOnAnEndedRunIs204() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            // several runs, so that both a moved and an unmoved connection are likely exercised
            for (int i = 0; i < 4; i++) {
                String runId = "ended-max-" + i;
                Http.publish(server.base(), runId, admin, FULL_RUN_1, FULL_RUN_2, FULL_RUN_3);
                for (String id : new String[] {"2147483647", "3", "2147483646"}) {
                    try (RawHttp conn = new RawHttp(server.port())) {
                        conn.send("GET /v1/runs/" + runId + "/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: " + id
                                + "\r\nAuthorization: Bearer " + admin + "\r\n\r\n");
                        assertEquals(204, conn.readReply().status(), runId + " resumed after " + id);
                    }
                }
            }
            assertEquals(200, Http.get(server.base() + "/healthz").statusCode());
        }
    }

    @Test
    void lastEventIdBeyondAnOpenRunIs400AndOutOfRangeIs400() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            try (ChunkedPublisher open = ChunkedPublisher.open(server.port(), "open-max", "application/x-ndjson",
                    admin)) {
                open.send(FULL_RUN_1 + "\n");
                Http.get(server.base() + "/v1/runs/open-max", "Authorization", "Bearer " + admin);
                for (String id : new String[] {"2147483647", "2", "2147483648", "99999999999999999999", "-1"}) {
                    try (RawHttp conn = new RawHttp(server.port())) {
                        conn.send("GET /v1/runs/open-max/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: " + id
                                + "\r\nAuthorization: Bearer " + admin + "\r\n\r\n");
                        RawHttp.Reply reply = conn.readReply();
                        assertEquals(400, reply.status(), id);
                        assertTrue(reply.body().contains("\"error\":\"bad_last_event_id\""), id + ": " + reply.body());
                    }
                }
                open.send(FULL_RUN_3 + "\n");
                assertEquals(200, open.finish().status());
            }
        }
    }

    @Test
    void http10SubscriberGetsAnUnchunkedHttp10StreamEndedByClose() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "old-client", admin, FULL_RUN_1, FULL_RUN_2, FULL_RUN_3);
            try (RawHttp conn = new RawHttp(server.port())) {
                conn.send("GET /v1/runs/old-client/events HTTP/1.0\r\nAuthorization: Bearer " + admin + "\r\n\r\n");
                String all = conn.readToClose();
                assertTrue(all.startsWith("HTTP/1.0 200 "), all);
                String head = all.substring(0, all.indexOf("\r\n\r\n")).toLowerCase();
                String body = all.substring(all.indexOf("\r\n\r\n") + 4);
                assertFalse(head.contains("transfer-encoding"), head);
                assertFalse(head.contains("content-length"), head);
                assertTrue(body.startsWith("retry: "), body);
                assertTrue(body.contains("id: 1\n"), body);
                assertTrue(body.contains("data: " + FULL_RUN_3 + "\n\n"), body);
                assertFalse(body.contains("\r\n0\r\n"), "no chunk framing: " + body);
            }
        }
    }
}
