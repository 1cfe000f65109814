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
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (server.server().context().budget().committedBytes() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(0, server.server().context().budget().committedBytes(), "memory returns after retention");
            assertEquals(200, Http.get(server.base() + "/readyz").statusCode());
            assertEquals(200, Http.publish(server.base(), "a3", admin, "{\"type\":\"RUN_STARTED\"}").statusCode());
        }
    }
}
