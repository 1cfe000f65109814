package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A subscriber still waiting (--await-run) for a run when the server starts draining is answered 503
 * {@code draining} at once, not cut off when the server closes; one that arrives while draining is answered the same.
 */
class DrainingSubscriberTest {
    @Test
    void aWaitingSubscriberIsAnswered503DrainingWhenTheServerDrains() throws Exception {
        // one subscriber slot: while the waiting subscriber holds it, a second one is refused over_budget, which is how
        // the test knows the first is waiting (no sleep); reading the ended run ended-1 answers at once either way
        try (TestServer server = TestServer.start("--await-run", "60s", "--max-subscribers", "1")) {
            String token = Tokens.subscriber("*");
            assertEquals(200, Http.publish(server.base(), "ended-1", Tokens.admin(), "{\"type\":\"RUN_STARTED\"}",
                    "{\"type\":\"RUN_FINISHED\"}").statusCode());
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpRequest neverMade = HttpRequest.newBuilder(URI.create(server.base() + "/v1/runs/never-made/events"))
                    .header("Authorization", "Bearer " + token).build();
            CompletableFuture<HttpResponse<String>> waiting = client.sendAsync(neverMade,
                    HttpResponse.BodyHandlers.ofString());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                assertTrue(System.nanoTime() < deadline, "the waiting subscriber never held its slot");
                if (waiting.isDone()) {
                    // a probe held the one slot when it came: refused over_budget; it asks again
                    assertEquals(503, waiting.get().statusCode(), waiting.get().body());
                    waiting = client.sendAsync(neverMade, HttpResponse.BodyHandlers.ofString());
                }
                int probe = Http.get(server.base() + "/v1/runs/ended-1/events", "Authorization", "Bearer " + token)
                        .statusCode();
                if (probe == 503 && !waiting.isDone()) {
                    break; // the slot is the waiting subscriber's: it is waiting for never-made
                }
            }
            server.server().drain(5_000);
            HttpResponse<String> reply = waiting.get(5, TimeUnit.SECONDS);
            assertEquals(503, reply.statusCode(), reply.body());
            assertTrue(reply.body().contains("\"error\":\"draining\""), reply.body());
            assertEquals("1", reply.headers().firstValue("Retry-After").orElse(""));

            HttpResponse<String> late = Http.get(server.base() + "/v1/runs/late/events",
                    "Authorization", "Bearer " + token);
            assertEquals(503, late.statusCode(), late.body());
            assertTrue(late.body().contains("\"error\":\"draining\""), late.body());
        }
    }
}
