package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Tokens;
import io.iqstream.server.worker.Workers;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Probes the server every ~100 ms over fresh connections for as long as an attack lasts, and keeps every failure
 * (refused, closed, wrong status, no answer within {@link #STUCK_MS}). Two kinds of probe, one of each per round:
 * <ul>
 *   <li>{@code GET /healthz} on the admin port (when there is one, else the main port), as a load balancer's probe
 *       would: the admin port runs on the acceptor's thread, so this says the process answers;</li>
 *   <li>each worker, through the main port the attacks load: {@code GET /v1/runs/<id>} for a run id that worker
 *       owns ({@link Workers#indexOf}, the server's own mapping), which the main port hands to that worker, who
 *       answers 404 (no such run): the admin port alone would not see a stuck worker.</li>
 * </ul>
 * No latency is asserted: how long an answer takes on a shared machine is the machine's, not the server's (the
 * worst seen is printed, {@code health watch:}). What is asserted cannot be moved by a busy machine: every probe
 * answered with its status, and a whole round answered after the attack, before the watch stops. A worker that
 * reads a flood whole before it serves anything else is caught by {@code HostileFloodTest} (the events one loop
 * turn appends, counted on the loop); latency under load is the benchmark's (docs/BENCHMARK.md).
 * Runs on its own daemon thread; {@link #stop} ends it.
 */
final class HealthWatch implements AutoCloseable {
    /** How long a probe may go unanswered before the server counts as stuck: a liveness bound, not a speed claim. */
    static final long STUCK_MS = 30_000;
    private static final long INTERVAL_MS = 100;

    private final int healthPort;
    private final int mainPort;
    private final List<String> workerRuns;
    private final String token = Tokens.admin();
    private final Thread thread;
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    /** The slowest answers seen, printed for the record only. */
    private volatile long maxLatencyMs;
    private volatile long maxWorkerLatencyMs;
    private volatile int probes;
    private volatile int workerProbes;
    /** Whole rounds answered (a /healthz probe and one per worker). */
    private volatile int rounds;

    private HealthWatch(int healthPort, int mainPort, List<String> workerRuns) {
        this.healthPort = healthPort;
        this.mainPort = mainPort;
        this.workerRuns = workerRuns;
        this.thread = new Thread(this::loop, "health-watch-" + healthPort);
        this.thread.setDaemon(true);
    }

    /** Starts watching {@code server}'s /healthz (admin port when it has one) and each of its workers. */
    static HealthWatch start(HostileServer server) {
        return start(server, true);
    }

    /**
     * As {@link #start(HostileServer)}; {@code probeWorkers} false only for an attack on the main port's
     * connection slots themselves, where a refused main-port connection is the expected answer.
     */
    static HealthWatch start(HostileServer server, boolean probeWorkers) {
        HealthWatch w = new HealthWatch(server.healthPort(), server.port(),
                probeWorkers ? runOwnedByEachWorker(server.workers()) : List.of());
        w.thread.start();
        return w;
    }

    /** One run id per worker, the i-th owned by worker i ("health-probe-N", the first N that worker owns). */
    static List<String> runOwnedByEachWorker(int workers) {
        List<String> runs = new ArrayList<>(Collections.nCopies(workers, (String) null));
        int found = 0;
        for (int n = 0; found < workers; n++) {
            String run = "health-probe-" + n;
            int owner = Workers.indexOf(run, workers);
            if (runs.get(owner) == null) {
                runs.set(owner, run);
                found++;
            }
        }
        return runs;
    }

    private void loop() {
        try {
            while (running) {
                long t0 = System.nanoTime();
                long ms = probe("/healthz", healthPort, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Connection: close\r\n\r\n", 200);
                maxLatencyMs = Math.max(maxLatencyMs, ms);
                probes++;
                for (int i = 0; i < workerRuns.size(); i++) {
                    long wms = probe("worker " + i, mainPort, "GET /v1/runs/" + workerRuns.get(i)
                            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
                            + "\r\nConnection: close\r\n\r\n", 404);
                    maxWorkerLatencyMs = Math.max(maxWorkerLatencyMs, wms);
                    workerProbes++;
                }
                rounds++;
                long spent = (System.nanoTime() - t0) / 1_000_000L;
                stopped.await(Math.max(1, INTERVAL_MS - spent), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One probe; records a failure when the answer is not {@code status}; returns how long it took in ms. */
    private long probe(String what, int port, String request, int status) {
        long t0 = System.nanoTime();
        try {
            RawHttp.Response r = RawHttp.exchange(port, request, STUCK_MS);
            if (r.status() != status) {
                failures.add(what + ": status " + r.status());
            }
        } catch (Exception | AssertionError e) {
            failures.add(what + ": " + e);
        }
        return (System.nanoTime() - t0) / 1_000_000L;
    }

    /** Stops probing and waits for the last probe to finish. */
    void stop() throws InterruptedException {
        running = false;
        stopped.countDown();
        thread.join(STUCK_MS + 10_000);
    }

    /**
     * Waits for a whole round to be answered after this call (the server answers once the attack is over, however
     * long a busy machine takes; {@link #STUCK_MS} per probe), stops, then asserts that every probe was answered
     * with its status.
     */
    void assertHealthy() throws InterruptedException {
        int before = rounds;
        long deadline = System.nanoTime() + (2 + workerRuns.size()) * 2 * STUCK_MS * 1_000_000L;
        while (rounds < before + 2 && thread.isAlive() && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        int answered = rounds;
        stop();
        List<String> f;
        synchronized (failures) {
            f = new ArrayList<>(failures);
        }
        assertTrue(f.isEmpty(), "probes failed " + f.size() + " times (" + probes + " /healthz, " + workerProbes
                + " worker probes): " + f.subList(0, Math.min(5, f.size())));
        // two rounds finished since the call: the second began after it
        assertTrue(answered >= before + 2, "no whole round (/healthz and each of " + workerRuns.size() + " workers)"
                + " answered after the attack: " + rounds + " rounds, " + before + " before it");
        assertTrue(workerRuns.isEmpty() || workerProbes >= workerRuns.size(), "no worker probe ran");
        System.out.printf("health watch: %d /healthz probes, worst %d ms; %d worker probes, worst %d ms (printed,"
                + " not asserted)%n", probes, maxLatencyMs, workerProbes, maxWorkerLatencyMs);
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
