package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

class AdmissionIntegrationTest {
    @Test
    void refusesNewRunWhenBudgetIsFullAndAdmitsAgainWhenRunsEnd() throws Exception {
        long budget = 2 * MemoryBudget.INITIAL_EXPECTED_RUN_BYTES + 1024;
        try (TestServer server = TestServer.start("--memory-budget", Long.toString(budget), "--retention", "200ms")) {
            String admin = Tokens.admin();
            assertEquals(200, Http.publish(server.base(), "a1", admin, "{\"type\":\"RUN_STARTED\"}").statusCode());
            assertEquals(200, Http.publish(server.base(), "a2", admin, "{\"type\":\"RUN_STARTED\"}").statusCode());
            HttpResponse<String> refused = Http.publish(server.base(), "a3", admin, "{\"type\":\"RUN_STARTED\"}");
            assertEquals(503, refused.statusCode());
            assertTrue(refused.body().contains("\"error\":\"over_budget\""), refused.body());
            assertTrue(refused.headers().firstValue("Retry-After").isPresent());
            assertEquals(503, Http.get(server.base() + "/readyz").statusCode());
            assertTrue(Http.get(server.base() + "/metrics").body()
                    .contains("iqstream_refusals_total{reason=\"over_budget\"} 1\n"));
            // runs already admitted keep streaming
            assertEquals(200, Http.publish(server.base(), "a1", admin, "{\"type\":\"X\"}", "{\"type\":\"RUN_FINISHED\"}")
                    .statusCode());
            assertEquals(200, Http.publish(server.base(), "a2", admin, "{\"type\":\"RUN_FINISHED\"}").statusCode());
            long deadline = System.nanoTime() + 30_000_000_000L; // liveness only
            MemoryBudget memory = server.server().context().budget();
            // what is left charged is the expired runs' tombstones (a few hundred bytes)
            while (memory.committedBytes() > memory.tombstoneBytes() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(memory.tombstoneBytes(), memory.committedBytes(), "memory returns after retention");
            assertEquals(200, Http.get(server.base() + "/readyz").statusCode());
            assertEquals(200, Http.publish(server.base(), "a3", admin, "{\"type\":\"RUN_STARTED\"}").statusCode());
        }
    }

    @Test
    void refusesSubscribersBeyondTheCapAndTakesThemAgainWhenOneLeaves() throws Exception {
        try (TestServer server = TestServer.start("--max-subscribers", "2")) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "capped", admin, "{\"type\":\"RUN_STARTED\"}");
            io.iqstream.server.testing.SseClient a = io.iqstream.server.testing.SseClient.open(server.port(),
                    "/v1/runs/capped/events", "Authorization: Bearer " + admin);
            io.iqstream.server.testing.SseClient b = io.iqstream.server.testing.SseClient.open(server.port(),
                    "/v1/runs/capped/events", "Authorization: Bearer " + admin);
            a.next(5000);
            b.next(5000);
            try (io.iqstream.server.testing.SseClient c = io.iqstream.server.testing.SseClient.open(server.port(),
                    "/v1/runs/capped/events", "Authorization: Bearer " + admin)) {
                assertEquals(503, c.status());
                assertTrue(c.body().contains("\"error\":\"over_budget\""), c.body());
                assertEquals("1", c.header("Retry-After"));
            }
            a.close();
            long deadline = System.nanoTime() + 30_000_000_000L; // liveness only
            int status = 503;
            while (status == 503 && System.nanoTime() < deadline) {
                Thread.sleep(20);
                try (io.iqstream.server.testing.SseClient d = io.iqstream.server.testing.SseClient.open(
                        server.port(), "/v1/runs/capped/events", "Authorization: Bearer " + admin)) {
                    status = d.status();
                }
            }
            assertEquals(200, status);
            b.close();
        }
    }
}
