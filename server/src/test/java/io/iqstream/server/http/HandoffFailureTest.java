package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.testing.RawHttp;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import org.junit.jupiter.api.Test;

/** An exception while serving a run request, on the loop it arrived on or the worker it was moved to, is a 500. */
class HandoffFailureTest {
    @Test
    void exceptionWhileServingAnswers500OnEitherLoop() throws Exception {
        HttpRequestHandler.beforeServeProbe = runId -> {
            if (runId.equals("boom")) {
                throw new IllegalStateException("test failure on the destination loop");
            }
        };
        try (TestServer server = TestServer.start("--workers", "2")) {
            var metrics = server.server().context().metrics();
            int moved = 0;
            int attempts = 0;
            // a connection lands on either loop: keep trying until one had to move to the run's owner
            while (attempts < 20 && (moved == 0 || attempts < 4)) {
                long movesBefore = metrics.channelMoves.sum();
                attempts++;
                try (RawHttp conn = new RawHttp(server.port())) {
                    conn.send("GET /v1/runs/boom HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + Tokens.admin()
                            + "\r\n\r\n");
                    RawHttp.Reply reply = conn.readReply();
                    if (metrics.channelMoves.sum() > movesBefore) {
                        moved++;
                    }
                    assertEquals(500, reply.status(), reply.body());
                    assertTrue(reply.body().contains("\"error\":\"internal_error\""), reply.body());
                    assertEquals("close", reply.header("Connection"));
                    assertTrue(conn.closedByServer());
                }
            }
            assertTrue(moved > 0, "some connection was moved to the run's owner");
            assertEquals(attempts, metrics.refusals(Refusal.INTERNAL_ERROR));
            assertEquals(200, io.iqstream.server.testing.Http.get(server.base() + "/healthz").statusCode());
        } finally {
            HttpRequestHandler.beforeServeProbe = null;
        }
    }
}
