package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server in its own JVM with a tiny heap, tiny direct memory and a budget of a few MiB, flooded with runs and
 * large events: it refuses (503 + Retry-After) instead of dying, stays responsive, finishes the runs it admitted
 * before the flood, and admits again once memory returns.
 */
class MemoryPressureTest {
    private static final int EARLY_RUNS = 5;
    private static final int EARLY_EVENTS = 120;

    @Test
    void floodIsRefusedWithoutOutOfMemoryAndAdmittedRunsComplete() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx128m", "-XX:MaxDirectMemorySize=24m",
                "-XX:+ExitOnOutOfMemoryError", "-Dio.netty.leakDetection.level=disabled",
                "-cp", System.getProperty("java.class.path"), "io.iqstream.server.Main", "serve",
                "--host", "127.0.0.1", "--port", "0", "--workers", "2", "--jwt-secret", TestServer.SECRET,
                "--memory-budget", "6m", "--retention", "1s", "--publisher-timeout", "1s",
                "--max-event-bytes", "256k", "--max-run-bytes", "4m");
        pb.redirectErrorStream(true);
        Process p = pb.start();
        ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
        int port = awaitPort(p, output);
        String base = "http://127.0.0.1:" + port;
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
            AtomicInteger refused = new AtomicInteger();
            AtomicInteger refusedWithoutRetryAfter = new AtomicInteger();
            AtomicInteger floodRun = new AtomicInteger();
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
                                refused.incrementAndGet();
                                if (r.headers().firstValue("Retry-After").isEmpty()) {
                                    refusedWithoutRetryAfter.incrementAndGet();
                                }
                            }
                        } catch (Exception e) {
                            // a refused request may close the connection mid-body: that is a refusal too
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                });
            }
            long worstHealthMs = 0;
            for (int i = 1; i < EARLY_EVENTS; i++) {
                for (ChunkedPublisher pub : early) {
                    pub.send("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"token-" + i + "\"}\n");
                }
                if (i % 20 == 0) {
                    long t0 = System.nanoTime();
                    assertEquals(200, Http.get(base + "/healthz").statusCode());
                    worstHealthMs = Math.max(worstHealthMs, (System.nanoTime() - t0) / 1_000_000);
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
            assertTrue(refused.get() > 0, "the flood was refused at some point");
            assertEquals(0, refusedWithoutRetryAfter.get(), "every 503 carries Retry-After");
            assertTrue(worstHealthMs < 1000, "healthz answered within a second (worst " + worstHealthMs + " ms)");
            assertTrue(p.isAlive(), "the server is alive");
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
            assertTrue(metrics.contains("iqstream_refusals_total{reason=\"over_budget\"}"), metrics);
        } finally {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
        String all = String.join("\n", output);
        assertFalse(all.contains("OutOfMemoryError"), all);
    }

    private static int awaitPort(Process p, ConcurrentLinkedQueue<String> output) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Pattern listening = Pattern.compile("listening on http://[^:]+:(\\d+)");
        long deadline = System.nanoTime() + 30_000_000_000L;
        String line;
        while (System.nanoTime() < deadline && (line = r.readLine()) != null) {
            output.add(line);
            Matcher m = listening.matcher(line);
            if (m.find()) {
                Thread drain = new Thread(() -> {
                    try {
                        String l;
                        while ((l = r.readLine()) != null) {
                            output.add(l);
                        }
                    } catch (Exception ignored) {
                        // process ended
                    }
                });
                drain.setDaemon(true);
                drain.start();
                return Integer.parseInt(m.group(1));
            }
        }
        throw new AssertionError("server did not start: " + String.join("\n", output));
    }
}
