package io.iqstream.server.demo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.iqstream.server.metrics.Metrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demo's simulated agent backend: plays a {@link DemoScript} into the relay through the normal publish API, as
 * a real backend would. A run is made in two requests: its first event alone ({@code POST
 * /v1/runs/{runId}/events}), whose {@code 200} means the relay created the run — only then is the start reported
 * {@link Outcome.Kind#CREATED} —, then the rest as one streamed continuation ({@code Last-Event-ID: 1},
 * {@code application/x-ndjson}), each event written the moment it is produced. {@code retentionMs} after that
 * request ends the run is deleted ({@code DELETE /v1/runs/{runId}}), and only then is it given back to the quota.
 *
 * <p>Threads: its own daemon scheduler produces the events and the JDK HTTP client (on its own daemon executor)
 * sends them; never a Netty event loop, so {@link #start} may be called from one (it returns at once). Failures are
 * counted ({@code iqstream_demo_runs_failed_total}) and logged at debug, never one warning per run.
 */
final class RunSimulator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RunSimulator.class);
    /** Longest wait for the relay to answer the first event (it answers in a round trip). */
    private static final Duration CREATE_TIMEOUT = Duration.ofSeconds(10);

    /**
     * What a start became: the run created (its first event accepted), refused by the relay (its HTTP status and
     * error code, 0 and the exception when it could not be asked), or not tried because the simulator is closed.
     */
    record Outcome(Kind kind, int status, String detail) {
        enum Kind { CREATED, REFUSED, CLOSED }
    }

    private final URI selfBaseUri;
    private final String publishToken;
    private final long retentionMs;
    private final Metrics metrics;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService httpExecutor;
    private final HttpClient http;
    private final AtomicInteger activeRuns = new AtomicInteger();
    private volatile boolean closed;

    /** @param retentionMs how long an ended run stays readable before it is deleted ({@code --demo-retention}) */
    RunSimulator(URI selfBaseUri, String publishToken, long retentionMs, Metrics metrics) {
        this.selfBaseUri = selfBaseUri;
        this.publishToken = publishToken;
        this.retentionMs = retentionMs;
        this.metrics = metrics;
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("iqstream-demo-agent"));
        timer.setRemoveOnCancelPolicy(true);
        this.scheduler = timer;
        this.httpExecutor = Executors.newCachedThreadPool(daemon("iqstream-demo-http"));
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(httpExecutor)
                .build();
    }

    /** Runs being played now (created, their events still being sent). */
    int activeRuns() {
        return activeRuns.get();
    }

    /**
     * Creates run {@code runId} with the script's first event and, once the relay has accepted it, plays the rest;
     * returns at once.
     *
     * @param speed 1 plays in real time (about 10 s a run); 10 plays ten times faster
     * @param gone called once when the run is no longer held: deleted after its retention, or never created
     * @return completes when the relay has answered the first event
     */
    CompletableFuture<Outcome> start(String runId, DemoScript script, double speed, Runnable gone) {
        Runnable once = once(gone);
        if (closed) {
            once.run();
            return CompletableFuture.completedFuture(new Outcome(Outcome.Kind.CLOSED, 0, "closed"));
        }
        List<DemoScript.Step> steps = script.steps();
        long startNanos = System.nanoTime();
        long startEpochMs = System.currentTimeMillis();
        String first = line(steps.get(0), startEpochMs);
        HttpRequest create = publish(runId).timeout(CREATE_TIMEOUT)
                .POST(HttpRequest.BodyPublishers.ofString(first, StandardCharsets.UTF_8))
                .build();
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        try {
            http.sendAsync(create, HttpResponse.BodyHandlers.ofString()).whenComplete((response, failure) -> {
                if (failure == null && response.statusCode() == 200) {
                    outcome.complete(new Outcome(Outcome.Kind.CREATED, 200, ""));
                    play(runId, steps, speed, startNanos, startEpochMs, once);
                    return;
                }
                once.run();
                if (closed) {
                    outcome.complete(new Outcome(Outcome.Kind.CLOSED, 0, "closed"));
                } else if (failure != null) {
                    outcome.complete(new Outcome(Outcome.Kind.REFUSED, 0, failure.toString()));
                } else {
                    outcome.complete(new Outcome(Outcome.Kind.REFUSED, response.statusCode(), response.body()));
                }
            });
        } catch (RuntimeException e) { // the client is shut down: closing
            once.run();
            outcome.complete(new Outcome(Outcome.Kind.CLOSED, 0, "closed"));
        }
        return outcome;
    }

    private HttpRequest.Builder publish(String runId) {
        return HttpRequest.newBuilder(selfBaseUri.resolve("/v1/runs/" + runId + "/events"))
                .header("Content-Type", "application/x-ndjson")
                .header("Authorization", "Bearer " + publishToken);
    }

    /** Streams events 2… of a created run, then deletes it after the retention. */
    private void play(String runId, List<DemoScript.Step> steps, double speed, long startNanos, long startEpochMs,
            Runnable gone) {
        activeRuns.incrementAndGet();
        StreamedBody body = new StreamedBody();
        HttpRequest rest = publish(runId).header("Last-Event-ID", "1")
                .POST(HttpRequest.BodyPublishers.fromPublisher(body))
                .build();
        Playback playback = new Playback(runId, steps, speed, body, startNanos, startEpochMs);
        try {
            http.sendAsync(rest, HttpResponse.BodyHandlers.ofString()).whenComplete((response, failure) -> {
                playback.stop();
                activeRuns.decrementAndGet();
                if (!closed && (failure != null || response.statusCode() != 200)) {
                    metrics.demoRunsFailed.increment();
                    log.debug("demo run {}: publish failed: {}", runId,
                            failure != null ? failure.toString() : response.statusCode() + " " + response.body());
                }
                deleteLater(runId, gone);
            });
            scheduler.execute(playback);
        } catch (RuntimeException e) { // rejected: closing
            playback.stop();
            body.complete();
            gone.run();
        }
    }

    private void deleteLater(String runId, Runnable gone) {
        try {
            scheduler.schedule(() -> delete(runId, gone, true), retentionMs, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) { // rejected: closing
            gone.run();
        }
    }

    /** Deletes the run; a run still open (its publish broke off) is stopped by the first DELETE, dropped by a second. */
    private void delete(String runId, Runnable gone, boolean again) {
        HttpRequest request = HttpRequest.newBuilder(selfBaseUri.resolve("/v1/runs/" + runId))
                .header("Authorization", "Bearer " + publishToken)
                .timeout(CREATE_TIMEOUT)
                .DELETE()
                .build();
        try {
            http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, failure) -> {
                if (failure == null && response.statusCode() == 200 && again && !closed) {
                    delete(runId, gone, false);
                    return;
                }
                if (failure != null && !closed) {
                    log.debug("demo run {}: delete failed: {}", runId, failure.toString());
                }
                gone.run();
            });
        } catch (RuntimeException e) { // closing
            gone.run();
        }
    }

    @Override
    public void close() {
        closed = true;
        scheduler.shutdownNow();
        http.shutdownNow();
        httpExecutor.shutdownNow();
    }

    private static String line(DemoScript.Step step, long epochMs) {
        ObjectNode event = step.event().deepCopy();
        event.put("timestamp", epochMs);
        return event.toString() + "\n";
    }

    private static Runnable once(Runnable r) {
        AtomicBoolean done = new AtomicBoolean();
        return () -> {
            if (done.compareAndSet(false, true)) {
                r.run();
            }
        };
    }

    /**
     * Produces events 2… of one run on schedule. Times are absolute from the run's start (its first event, sent
     * at once; the script's lead-in then comes before the second, while the page subscribes), so a late tick
     * catches up rather than drifting; each event's {@code timestamp} is its scheduled production time. Confined
     * to the scheduler thread.
     */
    private final class Playback implements Runnable {
        private final String runId;
        private final List<DemoScript.Step> steps;
        private final double speed;
        private final StreamedBody body;
        private final long startNanos;
        private final long startEpochMs;
        private int next = 1;
        private volatile boolean stopped;

        Playback(String runId, List<DemoScript.Step> steps, double speed, StreamedBody body, long startNanos,
                long startEpochMs) {
            this.runId = runId;
            this.steps = steps;
            this.speed = speed;
            this.body = body;
            this.startNanos = startNanos;
            this.startEpochMs = startEpochMs;
        }

        void stop() {
            stopped = true;
        }

        @Override
        public void run() {
            if (stopped || body.isCancelled()) {
                log.debug("demo run {}: stopped after {} events", runId, next);
                return;
            }
            long elapsedNs = System.nanoTime() - startNanos;
            while (next < steps.size() && scaled(steps.get(next).offsetNs()) <= elapsedNs) {
                long offsetNs = scaled(steps.get(next).offsetNs());
                String line = line(steps.get(next), startEpochMs + offsetNs / 1_000_000L);
                body.offer(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
                next++;
            }
            if (next == steps.size()) {
                body.complete();
                return;
            }
            long delayNs = scaled(steps.get(next).offsetNs()) - (System.nanoTime() - startNanos);
            try {
                scheduler.schedule(this, Math.max(0, delayNs), TimeUnit.NANOSECONDS);
            } catch (RuntimeException e) { // rejected: the simulator is closing
                body.complete();
            }
        }

        private long scaled(long offsetNs) {
            return (long) (offsetNs / speed);
        }
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
