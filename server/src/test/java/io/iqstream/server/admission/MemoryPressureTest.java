package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.LaunchedServer;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server in its own JVM, started as the launcher starts it ({@link LaunchedServer}: the launcher's JVM flags,
 * heap and direct memory from {@link MemoryPlan} for a 6 MiB budget, leak detection paranoid), flooded with runs
 * and large events: it refuses with 503 + Retry-After (counted apart from connections cut mid-body, and required)
 * instead of dying, never leaves a flood publish unanswered (a client timeout is counted apart and fails), counts
 * the refusals in {@code iqstream_refusals_total{reason="over_budget"}}, answers every {@code /healthz} beside
 * the flood (counted, never timed), finishes the runs it admitted before the flood, admits again once memory
 * returns, and never prints an {@code OutOfMemoryError}, an {@code OutOfDirectMemoryError} or a {@code LEAK:} report.
 */
class MemoryPressureTest {
    private static final int EARLY_RUNS = 5;
    private static final int EARLY_EVENTS = 120;
    private static final Pattern OVER_BUDGET = Pattern.compile(
            "(?m)^iqstream_refusals_total\\{reason=\"over_budget\"\\} (\\d+)");

    @Test
    void floodIsRefusedWithoutOutOfMemoryAndAdmittedRunsComplete() throws Exception {
        LaunchedServer server = LaunchedServer.start("--memory-budget", "6m", "--retention", "1s",
                "--publisher-timeout", "1s", "--max-event-bytes", "256k", "--max-run-bytes", "4m");
        int port = server.port();
        String base = server.base();
        String admin = Tokens.admin();
        try {
            // runs admitted before the flood, each with a subscriber
            List<ChunkedPublisher> early = new ArrayList<>();
            List<SseClient> readers = new ArrayList<>();
            for (int r = 0; r < EARLY_RUNS; r++) {
                ChunkedPublisher pub = ChunkedPublisher.open(port, "early-" + r, "application/x-ndjson", admin);
                pub.send("{\"type\":\"RUN_STARTED\"}\n");
                early.add(pub);
                readers.add(SseClient.open(port, "/v1/runs/early-" + r + "/events", "Authorization: Bearer " + admin));
            }
            AtomicBoolean flooding = new AtomicBoolean(true);
            AtomicInteger refused503 = new AtomicInteger();
            AtomicInteger cutMidBody = new AtomicInteger();
            AtomicInteger timedOut = new AtomicInteger();
            List<String> otherAnswers = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicInteger refusedWithoutRetryAfter = new AtomicInteger();
            AtomicInteger floodRun = new AtomicInteger();
            AtomicInteger floodAnswered = new AtomicInteger();
            // random text: the log's packing cannot shrink it, so the flood really fills the budget
            java.util.Random rnd = new java.util.Random(1);
            StringBuilder noise = new StringBuilder(200_000);
            String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
            for (int i = 0; i < 200_000; i++) {
                noise.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
            }
            String big = "{\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + noise + "\"}";
            ExecutorService pool = Executors.newFixedThreadPool(6);
            for (int t = 0; t < 6; t++) {
                pool.submit(() -> {
                    while (flooding.get()) {
                        try {
                            HttpResponse<String> r = Http.publish(base, "flood-" + floodRun.incrementAndGet(),
                                    admin, big, big, big, big, "{\"type\":\"RUN_FINISHED\"}");
                            if (r.statusCode() == 503) {
                                refused503.incrementAndGet();
                                if (r.headers().firstValue("Retry-After").isEmpty()) {
                                    refusedWithoutRetryAfter.incrementAndGet();
                                }
                            } else if (r.statusCode() != 200) {
                                otherAnswers.add(r.statusCode() + " " + r.body());
                            }
                            floodAnswered.incrementAndGet();
                        } catch (java.net.http.HttpTimeoutException e) {
                            // no answer within the client's 20 s: a server that hangs a refused request, not a cut
                            timedOut.incrementAndGet();
                        } catch (java.io.IOException e) {
                            // a refused request may close the connection mid-body: counted, but not as a 503
                            cutMidBody.incrementAndGet();
                        }
                    }
                    return null;
                });
            }
            // /healthz asked every 20 events while the flood runs: each answered 200 (the client gives up after its
            // 20 s, a liveness bound), and flood publishes answered between the first and the last probe (ordering: the
            // probes were served beside the flood, not after it). The time each took is printed, never asserted: a
            // busy machine moves it, and latency under load is the benchmark's
            long worstHealthMs = 0;
            int healthz = 0;
            int floodAtFirstHealthz = -1;
            int floodAtLastHealthz = -1;
            for (int i = 1; i < EARLY_EVENTS; i++) {
                for (ChunkedPublisher pub : early) {
                    pub.send("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"token-" + i + "\"}\n");
                }
                if (i % 20 == 0) {
                    long t0 = System.nanoTime();
                    assertEquals(200, Http.get(base + "/healthz").statusCode(), "/healthz under the flood");
                    worstHealthMs = Math.max(worstHealthMs, (System.nanoTime() - t0) / 1_000_000);
                    healthz++;
                    floodAtLastHealthz = floodAnswered.get();
                    if (floodAtFirstHealthz < 0) {
                        floodAtFirstHealthz = floodAtLastHealthz;
                    }
                }
                Thread.sleep(10);
            }
            for (ChunkedPublisher pub : early) {
                pub.send("{\"type\":\"RUN_FINISHED\"}\n");
                assertEquals(200, pub.finish().status());
            }
            flooding.set(false);
            pool.shutdown();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
            for (SseClient reader : readers) {
                List<SseClient.Event> got = reader.take(EARLY_EVENTS + 1, 10_000);
                SseClient.assertConsecutive(got, 1);
                reader.close();
            }
            assertTrue(refused503.get() > 0, "the flood was refused with 503 at some point (503s: " + refused503
                    + ", connections cut mid-body: " + cutMidBody + ") " + server.output());
            assertEquals(0, refusedWithoutRetryAfter.get(), "every 503 carries Retry-After");
            assertEquals(0, timedOut.get(), "a flood publish went unanswered for 20 s (a hang, not a cut mid-body; "
                    + refused503 + " 503s, " + cutMidBody + " cut) " + server.output());
            assertEquals(List.of(), otherAnswers, "a flood publish is answered 200 or 503 over_budget, nothing else");
            System.out.println("memory pressure: " + healthz + " /healthz answered under the flood, worst "
                    + worstHealthMs + " ms (printed, not asserted); flood answers " + floodAnswered + " ("
                    + refused503 + " 503), " + (floodAtLastHealthz - floodAtFirstHealthz) + " between the first and"
                    + " the last /healthz");
            assertEquals((EARLY_EVENTS - 1) / 20, healthz, "every /healthz under the flood answered 200");
            assertTrue(floodAtLastHealthz > floodAtFirstHealthz, "flood publishes were answered between the first"
                    + " and the last /healthz (" + floodAtFirstHealthz + " then " + floodAtLastHealthz + "): the"
                    + " probes were served beside the flood");
            assertTrue(server.isAlive(), "the server is alive");
            // memory returns after retention: a new run is admitted again
            long deadline = System.nanoTime() + 15_000_000_000L;
            int status = 0;
            while (System.nanoTime() < deadline && status != 200) {
                Thread.sleep(200);
                status = Http.publish(base, "after-" + System.nanoTime(), admin, "{\"type\":\"RUN_STARTED\"}")
                        .statusCode();
            }
            assertEquals(200, status, "admitted again once runs ended and retention passed");
            String metrics = Http.get(base + "/metrics").body();
            assertTrue(overBudgetRefusals(metrics) >= refused503.get(), "every 503 seen is counted as over_budget ("
                    + refused503 + " seen):\n" + metrics);
        } finally {
            server.close();
        }
        assertEquals(List.of(), server.outOfMemoryLines(), server.output());
        server.assertNoLeaks();
    }

    /** The value of {@code iqstream_refusals_total{reason="over_budget"}}; fails when the line is absent. */
    static long overBudgetRefusals(String metrics) {
        Matcher m = OVER_BUDGET.matcher(metrics);
        assertTrue(m.find(), "no over_budget refusal counter in /metrics:\n" + metrics);
        return Long.parseLong(m.group(1));
    }
}
