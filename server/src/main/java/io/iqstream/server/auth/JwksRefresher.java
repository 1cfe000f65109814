package io.iqstream.server.auth;

import static io.iqstream.server.metrics.Metrics.counter;
import static io.iqstream.server.metrics.Metrics.gauge;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a JWK Set current: fetches it from its {@link JwksLocation} at start and then in the
 * background, and publishes each usable set as an immutable {@link KeyRing} that token
 * verification reads without locks.
 *
 * <p>Implementation notes. Thread model: one daemon thread, {@code iqstream-jwks}, owns the fetch
 * state (validator, next due time, failure streak) and is the only caller of
 * {@link JwksLocation#fetch}; event loops only read the current ring (one volatile read) and, for a
 * token naming an unknown {@code kid}, set a flag and unpark the thread
 * ({@link #requestEarlyRefresh}). Nothing here ever blocks an event loop.
 *
 * <p>Schedule: after a good answer the next fetch is due after its {@code Cache-Control: max-age},
 * held within [{@code refreshMinMs}, {@code refreshMaxMs}] (no max-age: the ceiling). Requests are
 * conditional ({@code If-None-Match}); a 304 confirms the set in use. An early refresh asked for by an
 * unknown kid happens at most once per {@code refreshMinMs} since the last fetch of any kind, so a
 * flood of tokens with random kids costs the key server at most one request per floor. A failed
 * fetch (timeout, I/O, TLS, a status other than 200/304, too large, bad JSON, no usable key) keeps the
 * last good set, is counted by reason, logged once per failure streak (debug after the first), and
 * retried with doubling delays from the floor to the ceiling (from 250 ms up to the floor while no
 * set has loaded yet).
 *
 * <p>Swap: a new set's keys that equal keys in use keep their {@link VerificationKey} objects;
 * keys that left the set are {@linkplain VerificationKey#retire() retired} after the new ring is
 * published, so verified tokens cached with them stop being accepted ({@link TokenCache}).
 *
 * <p>Readiness: ready while a set is loaded and its last good fetch (a 304 included) is at most
 * {@code maxAgeMs} old.
 */
final class JwksRefresher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JwksRefresher.class);
    /** First retry delay while no set has loaded yet. */
    static final long FIRST_RETRY_MS = 250;

    private final JwksLocation location;
    private final Clock clock;
    private final long refreshMinMs;
    private final long refreshMaxMs;
    private final long maxAgeMs;
    private final AtomicReference<KeyRing> ring = new AtomicReference<>();
    private final CountDownLatch firstSet = new CountDownLatch(1);

    // confined to the refresh thread
    private String etag;
    private long nextDueMs;
    private long lastAttemptMs;
    private boolean attempted;
    private int failureStreak;
    private List<String> lastSkipped = List.of();

    // read by any thread
    private volatile long lastSuccessMs = -1;
    private volatile boolean earlyRequested;
    private volatile String lastFailure = "";
    private volatile Thread thread;
    private volatile boolean closed;
    private final AtomicLongArray failures = new AtomicLongArray(JwksFailure.values().length);
    private final AtomicLong fetches = new AtomicLong();
    private final AtomicLong updates = new AtomicLong();
    private final AtomicLong notModified = new AtomicLong();
    private final AtomicLong earlyRefreshes = new AtomicLong();
    private final LongAdder unknownKids = new LongAdder();

    /**
     * @param initial a set already loaded (a file read strictly at start), or null
     * @param refreshMinMs the floor between fetches, positive
     * @param refreshMaxMs the ceiling between fetches, at least the floor
     * @param maxAgeMs how old the last good set may grow before {@link #isReady()} turns false
     */
    JwksRefresher(JwksLocation location, KeyRing initial, long refreshMinMs, long refreshMaxMs, long maxAgeMs,
            Clock clock) {
        if (refreshMinMs <= 0 || refreshMaxMs < refreshMinMs || maxAgeMs <= 0) {
            throw new IllegalArgumentException("JWKS refresh needs 0 < min <= max and a positive max age, not min "
                    + refreshMinMs + " ms, max " + refreshMaxMs + " ms, max age " + maxAgeMs + " ms");
        }
        this.location = location;
        this.clock = clock;
        this.refreshMinMs = refreshMinMs;
        this.refreshMaxMs = refreshMaxMs;
        this.maxAgeMs = maxAgeMs;
        long now = clock.millis();
        if (initial != null) {
            ring.set(initial);
            lastSuccessMs = now;
            firstSet.countDown();
            nextDueMs = now + refreshMinMs;
        } else {
            nextDueMs = now;
        }
    }

    /** Starts the background thread. */
    void start() {
        Thread t = new Thread(this::loop, "iqstream-jwks");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    private void loop() {
        while (!closed) {
            try {
                runOnce();
            } catch (RuntimeException e) {
                LOG.error("JWKS refresh from {} failed unexpectedly (a bug worth reporting)", location.describe(), e);
                nextDueMs = clock.millis() + refreshMinMs;
            }
            long wake = nextDueMs;
            if (earlyRequested) {
                wake = Math.min(wake, lastAttemptMs + refreshMinMs);
            }
            long waitMs = wake - clock.millis();
            if (waitMs > 0 && !closed) {
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(waitMs));
            }
        }
    }

    /**
     * Fetches if a fetch is due or an early refresh is asked for and allowed. Refresh thread only
     * (tests call it directly, with no thread started, under a controlled clock).
     *
     * @return whether a fetch was made
     */
    boolean runOnce() {
        long now = clock.millis();
        boolean due = now >= nextDueMs;
        boolean early = earlyRequested && (!attempted || now - lastAttemptMs >= refreshMinMs);
        if (!due && !early) {
            return false;
        }
        earlyRequested = false;
        if (!due) {
            earlyRefreshes.incrementAndGet();
        }
        attempt(now);
        return true;
    }

    private void attempt(long now) {
        attempted = true;
        lastAttemptMs = now;
        fetches.incrementAndGet();
        KeyRing current = ring.get();
        JwksFetch fetch = location.fetch(current == null ? null : etag);
        switch (fetch.kind()) {
            case NOT_MODIFIED -> {
                notModified.incrementAndGet();
                etag = fetch.etag();
                succeeded(now, fetch.maxAgeMs());
            }
            case FETCHED -> {
                JwksFile.Lenient parsed;
                try {
                    parsed = JwksFile.parseLenient(fetch.body(), "JWKS " + location.describe());
                } catch (IllegalArgumentException e) {
                    failed(now, JwksFailure.BAD_JSON, e.getMessage());
                    return;
                }
                reportSkipped(parsed.skipped());
                if (parsed.keys().isEmpty()) {
                    failed(now, JwksFailure.NO_USABLE_KEY, "JWKS " + location.describe() + " has no usable"
                            + " signature-verification key" + (parsed.skipped().isEmpty() ? "" : " (skipped: "
                            + String.join("; ", parsed.skipped()) + ")"));
                    return;
                }
                swap(parsed.keys());
                etag = fetch.etag();
                succeeded(now, fetch.maxAgeMs());
            }
            default -> failed(now, fetch.failure(), fetch.detail());
        }
    }

    private void swap(List<VerificationKey> fresh) {
        KeyRing old = ring.get();
        List<VerificationKey> kept = new ArrayList<>(fresh.size());
        List<VerificationKey> gone = new ArrayList<>(old == null ? List.of() : old.keys());
        for (VerificationKey key : fresh) {
            VerificationKey same = null;
            for (VerificationKey o : gone) {
                if (o.sameAs(key)) {
                    same = o;
                    break;
                }
            }
            if (same != null) {
                gone.remove(same);
                kept.add(same);
            } else {
                kept.add(key);
            }
        }
        boolean changed = old == null || !gone.isEmpty() || kept.size() != old.keys().size();
        if (!changed) {
            return;
        }
        KeyRing next = KeyRing.fromJwksKeys(kept, location.describe());
        ring.set(next);
        for (VerificationKey key : gone) {
            key.retire();
        }
        updates.incrementAndGet();
        firstSet.countDown();
        if (old == null) {
            LOG.info("loaded {}", next.description());
        } else {
            List<String> removed = new ArrayList<>();
            for (VerificationKey key : gone) {
                removed.add(String.valueOf(key.kid()));
            }
            LOG.info("JWKS {} changed: now {}{}", location.describe(), next.description(),
                    removed.isEmpty() ? "" : "; removed kid " + String.join(", ", removed)
                            + " (tokens signed with them are refused from now on)");
        }
    }

    private void reportSkipped(List<String> skipped) {
        if (!skipped.equals(lastSkipped)) {
            for (String line : skipped) {
                LOG.warn("JWKS {}: ignoring {}", location.describe(), line);
            }
            lastSkipped = skipped;
        }
    }

    private void succeeded(long now, long maxAgeMs) {
        lastSuccessMs = now;
        if (failureStreak > 0) {
            LOG.info("JWKS refresh from {} works again after {} failed attempt(s)", location.describe(), failureStreak);
        }
        failureStreak = 0;
        long delay = maxAgeMs < 0 ? refreshMaxMs : Math.max(refreshMinMs, Math.min(refreshMaxMs, maxAgeMs));
        nextDueMs = now + delay;
    }

    private void failed(long now, JwksFailure reason, String detail) {
        failures.incrementAndGet(reason.ordinal());
        failureStreak++;
        lastFailure = reason.label() + ": " + detail;
        KeyRing current = ring.get();
        if (failureStreak == 1) {
            if (current == null) {
                LOG.warn("JWKS {} not loaded yet ({}): {}; retrying", location.describe(), reason.label(), detail);
            } else {
                LOG.warn("JWKS refresh from {} failed ({}): {}; keeping the set fetched at {} and retrying"
                        + " (logged once until it works again)", location.describe(), reason.label(), detail,
                        Instant.ofEpochMilli(lastSuccessMs));
            }
        } else {
            LOG.debug("JWKS refresh from {} failed again ({}, {} in a row): {}", location.describe(), reason.label(),
                    failureStreak, detail);
        }
        int shift = Math.min(failureStreak - 1, 20);
        long delay = current == null ? Math.min(FIRST_RETRY_MS << shift, refreshMinMs)
                : Math.min(refreshMinMs << shift, refreshMaxMs);
        nextDueMs = now + delay;
    }

    /** The set in use, or null before the first usable one. Any thread. */
    KeyRing current() {
        return ring.get();
    }

    /**
     * Asks for a fetch as soon as the floor allows, because a token named a kid the set lacks.
     * Any thread, event loops included: a counter, a volatile flag and at most one unpark.
     */
    void requestEarlyRefresh() {
        unknownKids.increment();
        if (!earlyRequested) {
            earlyRequested = true;
            Thread t = thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Whether a set is loaded and its last good fetch is at most the maximum age old. Any thread. */
    boolean isReady() {
        return ring.get() != null && clock.millis() - lastSuccessMs <= maxAgeMs;
    }

    /** Waits up to {@code timeoutMs} for the first usable set; true once there is one. */
    boolean awaitFirstSet(long timeoutMs) throws InterruptedException {
        return firstSet.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** The last failure, for the message of a failed start. */
    String lastFailure() {
        return lastFailure;
    }

    /** When the next fetch is due (epoch ms); for tests. Refresh thread only. */
    long nextDueMs() {
        return nextDueMs;
    }

    /** Fetches made so far (every kind); for tests. */
    long fetchCount() {
        return fetches.get();
    }

    /** Failures so far with this reason. */
    long failures(JwksFailure reason) {
        return failures.get(reason.ordinal());
    }

    /** The URL or file, for logs. */
    String describe() {
        return location.describe() + " (refreshed every " + refreshMinMs / 1000.0 + "-" + refreshMaxMs / 1000.0
                + " s, stale after " + maxAgeMs / 1000 + " s)";
    }

    /** Appends the JWKS metrics in Prometheus text format. Any thread. */
    void renderMetrics(StringBuilder sb) {
        KeyRing current = ring.get();
        gauge(sb, "iqstream_jwks_keys", "Keys in the JWK Set in use (0 before one has loaded).",
                current == null ? 0 : current.keys().size());
        long last = lastSuccessMs;
        sb.append("# HELP iqstream_jwks_last_success_timestamp_seconds When the JWK Set was last fetched or"
                + " confirmed unchanged (0: never).\n");
        sb.append("# TYPE iqstream_jwks_last_success_timestamp_seconds gauge\n");
        sb.append("iqstream_jwks_last_success_timestamp_seconds ")
                .append(last < 0 ? "0" : java.math.BigDecimal.valueOf(last, 3).toPlainString()).append('\n');
        gauge(sb, "iqstream_jwks_stale", "1 while no set is loaded or the last good one is older than"
                + " --jwks-max-age (/readyz answers 503).", isReady() ? 0 : 1);
        sb.append("# HELP iqstream_jwks_fetches_total JWK Set fetches, by result.\n");
        sb.append("# TYPE iqstream_jwks_fetches_total counter\n");
        long failed = 0;
        for (JwksFailure r : JwksFailure.values()) {
            failed += failures.get(r.ordinal());
        }
        sb.append("iqstream_jwks_fetches_total{result=\"updated\"} ").append(updates.get()).append('\n');
        sb.append("iqstream_jwks_fetches_total{result=\"unchanged\"} ")
                .append(fetches.get() - updates.get() - failed).append('\n');
        sb.append("iqstream_jwks_fetches_total{result=\"failed\"} ").append(failed).append('\n');
        sb.append("# HELP iqstream_jwks_refresh_failures_total Failed JWK Set fetches, by reason (the last good"
                + " set stays in use).\n");
        sb.append("# TYPE iqstream_jwks_refresh_failures_total counter\n");
        for (JwksFailure r : JwksFailure.values()) {
            sb.append("iqstream_jwks_refresh_failures_total{reason=\"").append(r.label()).append("\"} ")
                    .append(failures.get(r.ordinal())).append('\n');
        }
        counter(sb, "iqstream_jwks_unknown_kid_total", "Tokens naming a kid the JWK Set lacks (401).",
                unknownKids.sum());
        counter(sb, "iqstream_jwks_early_refreshes_total", "Fetches made early because of an unknown kid"
                + " (at most one per --jwks-refresh-min).", earlyRefreshes.get());
    }

    /** Stops the thread and the client. */
    @Override
    public void close() {
        closed = true;
        location.close();
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
