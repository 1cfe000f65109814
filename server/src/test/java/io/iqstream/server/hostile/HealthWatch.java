package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Asks {@code GET /healthz} every ~100 ms over a fresh connection for as long as an attack lasts, as a load
 * balancer's probe would, and keeps the slowest answer and every failure (refused, closed, not 200, no answer
 * within 2 s). Runs on its own daemon thread; {@link #stop} ends it.
 */
final class HealthWatch implements AutoCloseable {
    /** What issue 8 promises: /healthz answers within a second throughout. */
    static final long LIMIT_MS = 1_000;
    private static final long INTERVAL_MS = 100;

    private final int port;
    private final Thread thread;
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile long maxLatencyMs;
    private volatile int probes;

    private HealthWatch(int port) {
        this.port = port;
        this.thread = new Thread(this::loop, "health-watch-" + port);
        this.thread.setDaemon(true);
    }

    /** Starts watching {@code server}'s admin port when it has one, else its main port. */
    static HealthWatch start(HostileServer server) {
        HealthWatch w = new HealthWatch(server.healthPort());
        w.thread.start();
        return w;
    }

    private void loop() {
        try {
            while (running) {
                long t0 = System.nanoTime();
                try {
                    RawHttp.Response r = RawHttp.exchange(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            + "Connection: close\r\n\r\n", 2 * LIMIT_MS);
                    if (r.status() != 200) {
                        failures.add("status " + r.status());
                    }
                } catch (Exception | AssertionError e) {
                    failures.add(e.toString());
                }
                long ms = (System.nanoTime() - t0) / 1_000_000L;
                maxLatencyMs = Math.max(maxLatencyMs, ms);
                probes++;
                stopped.await(Math.max(1, INTERVAL_MS - ms), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops probing and waits for the last probe to finish. */
    void stop() throws InterruptedException {
        running = false;
        stopped.countDown();
        thread.join(5_000);
    }

    long maxLatencyMs() {
        return maxLatencyMs;
    }

    /** Stops, then asserts that there were probes, none failed and the slowest took under a second. */
    void assertHealthy() throws InterruptedException {
        stop();
        assertTrue(probes > 0, "no /healthz probe ran");
        List<String> f;
        synchronized (failures) {
            f = new ArrayList<>(failures);
        }
        assertTrue(f.isEmpty(), "/healthz failed " + f.size() + " of " + probes + " probes: "
                + f.subList(0, Math.min(5, f.size())));
        assertTrue(maxLatencyMs < LIMIT_MS, "/healthz took " + maxLatencyMs + " ms at worst (limit " + LIMIT_MS
                + " ms, " + probes + " probes)");
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
