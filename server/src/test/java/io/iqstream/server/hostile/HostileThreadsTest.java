package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.run.ThreadIndex;
import io.iqstream.server.testing.TestServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The threads API against a token holder who means harm (issue 23, item 1): one thread filled with small ended
 * runs, then a burst of listings of it at once. On the launcher's JVM flags and a heap sized by MemoryPlan, the
 * server must refuse the thread's runs past {@link ThreadIndex#MAX_RUNS_PER_THREAD} per worker, answer every
 * listing with one bounded page (or 503 {@code listings_busy}), and stay alive with no out-of-memory line.
 */
class HostileThreadsTest {
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);
    private static final Pattern RUN_ID = Pattern.compile("\"runId\":\"([^\"]*)\"");
    private static final Pattern NEXT = Pattern.compile("\"next\":(null|\"([^\"]*)\")");

    @Test
    void aThreadFilledWithRunsAndABurstOfListingsCannotExhaustTheHeap() throws Exception {
        try (HostileServer server = HostileServer.start("--workers", "2", "--memory-budget", "32m")) {
            String token = MINTER.mint(List.of("atk.*"), List.of("atk.*"), List.of("t-atk"), Duration.ofHours(1));
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            String base = "http://127.0.0.1:" + server.port();
            String body = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t-atk\",\"runId\":\"r\"}\n"
                    + "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t-atk\",\"runId\":\"r\"}\n";
            int accepted = 0;
            int threadFull = 0;
            // two workers hold at most 2 x MAX_RUNS_PER_THREAD runs of one thread: try well past that
            int tries = 2 * ThreadIndex.MAX_RUNS_PER_THREAD + 400;
            for (int i = 0; i < tries; i++) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/runs/atk." + i
                        + "/events")).header("Authorization", "Bearer " + token)
                        .header("Content-Type", "application/x-ndjson").timeout(Duration.ofSeconds(20))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    accepted++;
                } else {
                    assertEquals(409, r.statusCode(), r.body());
                    assertTrue(r.body().contains("\"error\":\"thread_full\""), r.body());
                    threadFull++;
                }
            }
            assertTrue(accepted <= 2 * ThreadIndex.MAX_RUNS_PER_THREAD, "runs of one thread held: " + accepted);
            assertTrue(threadFull >= 400, "refused as thread_full: " + threadFull);

            List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                burst.add(http.sendAsync(HttpRequest.newBuilder(URI.create(base + "/v1/threads/t-atk/runs?limit=1000"))
                        .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(30)).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            int pages = 0;
            for (CompletableFuture<HttpResponse<String>> f : burst) {
                HttpResponse<String> r = f.get();
                if (r.statusCode() == 200) {
                    pages++;
                    assertEquals(1000, count(RUN_ID.matcher(r.body())), "one full page of at most 1000 runs");
                } else {
                    assertEquals(503, r.statusCode(), r.body());
                    assertTrue(r.body().contains("\"error\":\"listings_busy\""), r.body());
                    assertEquals("1", r.headers().firstValue("Retry-After").orElse(null));
                }
            }
            assertTrue(pages >= 1, "at least one listing was answered");
            server.assertSound();

            // the pages, followed by their cursors, hold every accepted run exactly once
            Set<String> seen = new HashSet<>();
            String after = null;
            int requests = 0;
            do {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base
                        + "/v1/threads/t-atk/runs?limit=300" + (after == null ? "" : "&after=" + after)))
                        .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
                Matcher m = RUN_ID.matcher(r.body());
                while (m.find()) {
                    assertTrue(seen.add(m.group(1)), "listed twice: " + m.group(1));
                }
                Matcher next = NEXT.matcher(r.body());
                assertTrue(next.find(), r.body());
                after = next.group(2);
                requests++;
            } while (after != null && requests < 100);
            assertEquals(accepted, seen.size(), "every held run of the thread, over " + requests + " pages");
            server.assertSound();
        }
    }

    private static int count(Matcher m) {
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
