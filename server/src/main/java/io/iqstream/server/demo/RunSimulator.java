package io.iqstream.server.demo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demo's simulated agent backend: plays a {@link DemoScript} into the relay through the normal
 * publish API, as a real backend would: one streamed {@code POST /v1/runs/{runId}/events} request
 * ({@code application/x-ndjson}, bearer publish token), each event written the moment it is produced.
 *
 * <p>Threads: its own daemon scheduler produces the events and the JDK HTTP client (on its own daemon
 * executor) sends them; never a Netty event loop, so it may be started from one. At most
 * {@code maxActiveRuns} runs play at once; {@link #start} answers {@link Start#BUSY} beyond that.
 */
final class RunSimulator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RunSimulator.class);

    /** What {@link #start} did. */
    enum Start {
        STARTED,
        BUSY,
        CLOSED
    }

    private final URI selfBaseUri;
    private final String publishToken;
    private final int maxActiveRuns;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService httpExecutor;
    private final HttpClient http;
    private final AtomicInteger activeRuns = new AtomicInteger();
    private volatile boolean closed;

    RunSimulator(URI selfBaseUri, String publishToken, int maxActiveRuns) {
        this.selfBaseUri = selfBaseUri;
        this.publishToken = publishToken;
        this.maxActiveRuns = maxActiveRuns;
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

    /** Runs being played now. */
    int activeRuns() {
        return activeRuns.get();
    }

    /**
     * Starts playing the script into run {@code runId}; returns at once.
     *
     * @param speed 1 plays in real time (about 10 s a run); 10 plays ten times faster
     */
    Start start(String runId, DemoScript script, double speed) {
        if (closed) {
            return Start.CLOSED;
        }
        if (activeRuns.incrementAndGet() > maxActiveRuns) {
            activeRuns.decrementAndGet();
            return Start.BUSY;
        }
        StreamedBody body = new StreamedBody();
        HttpRequest request = HttpRequest.newBuilder(selfBaseUri.resolve("/v1/runs/" + runId + "/events"))
                .header("Content-Type", "application/x-ndjson")
                .header("Authorization", "Bearer " + publishToken)
                .POST(HttpRequest.BodyPublishers.fromPublisher(body))
                .build();
        Playback playback = new Playback(runId, script.steps(), speed, body);
        try {
            http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((response, failure) -> {
                playback.stop();
                activeRuns.decrementAndGet();
                if (failure != null && closed) {
                    log.debug("demo run {}: stopped by shutdown", runId);
                } else if (failure != null) {
                    log.warn("demo run {}: publish failed: {}", runId, failure.toString());
                } else if (response.statusCode() != 200) {
                    log.warn("demo run {}: publish answered {} {}", runId, response.statusCode(), response.body());
                } else {
                    log.debug("demo run {}: published: {}", runId, response.body());
                }
            });
            scheduler.execute(playback);
        } catch (RuntimeException e) { // rejected: closing
            playback.stop();
            body.complete();
            return Start.CLOSED;
        }
        return Start.STARTED;
    }

    @Override
    public void close() {
        closed = true;
        scheduler.shutdownNow();
        http.shutdownNow();
        httpExecutor.shutdownNow();
    }

    /**
     * Produces the events of one run on schedule. Times are absolute from the run's start, so a late tick
     * catches up rather than drifting; each event's {@code timestamp} is its scheduled production time.
     * Confined to the scheduler thread.
     */
    private final class Playback implements Runnable {
        private final String runId;
        private final List<DemoScript.Step> steps;
        private final double speed;
        private final StreamedBody body;
        private long startNanos;
        private long startEpochMs;
        private int next;
        private volatile boolean stopped;

        Playback(String runId, List<DemoScript.Step> steps, double speed, StreamedBody body) {
            this.runId = runId;
            this.steps = steps;
            this.speed = speed;
            this.body = body;
        }

        void stop() {
            stopped = true;
        }

        @Override
        public void run() {
            if (next == 0 && startNanos == 0) {
                startNanos = System.nanoTime();
                startEpochMs = System.currentTimeMillis();
            }
            if (stopped || body.isCancelled()) {
                log.debug("demo run {}: stopped after {} events", runId, next);
                return;
            }
            long elapsedNs = System.nanoTime() - startNanos;
            while (next < steps.size() && scaled(steps.get(next).offsetNs()) <= elapsedNs) {
                long offsetNs = scaled(steps.get(next).offsetNs());
                ObjectNode event = steps.get(next).event().deepCopy();
                event.put("timestamp", startEpochMs + offsetNs / 1_000_000L);
                body.offer(ByteBuffer.wrap((event.toString() + "\n").getBytes(StandardCharsets.UTF_8)));
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
