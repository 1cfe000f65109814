package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import org.junit.jupiter.api.Test;

/** An exception on the worker a connection was moved to answers 500 and closes; it never hangs. */
class HandoffFailureTest {
    @Test
    void exceptionAfterTheHandoffAnswers500() throws Exception {
        HttpRequestHandler.afterHandoffProbe = runId -> {
            if (runId.equals("boom")) {
                throw new IllegalStateException("test failure on the destination loop");
            }
        };
        try (TestServer server = TestServer.start("--workers", "2")) {
            var metrics = server.server().context().metrics();
            int failures = 0;
            // a connection lands on either loop; only one that must move to the run's owner meets the probe
            for (int i = 0; i < 12 && failures < 2; i++) {
                long movesBefore = metrics.channelMoves.sum();
                try (RawHttp conn = new RawHttp(server.port())) {
                    conn.send("GET /v1/runs/boom HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + Tokens.admin()
                            + "\r\n\r\n");
                    RawHttp.Reply reply = conn.readReply();
                    boolean moved = metrics.channelMoves.sum() > movesBefore;
                    if (moved) {
                        failures++;
                        assertEquals(500, reply.status(), reply.body());
                        assertTrue(reply.body().contains("\"error\":\"internal_error\""), reply.body());
                        assertTrue(conn.closedByServer());
                    } else {
                        assertEquals(404, reply.status(), reply.body());
                    }
                }
            }
            assertTrue(failures > 0, "some connection was moved");
            assertEquals(failures, metrics.refusals(Refusal.INTERNAL_ERROR));
        } finally {
            HttpRequestHandler.afterHandoffProbe = null;
        }
    }
}
