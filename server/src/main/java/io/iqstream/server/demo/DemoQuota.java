package io.iqstream.server.demo;

import io.iqstream.server.config.DemoSettings;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The demo's own limits, checked before a demo run is started: how many demo runs are held at once (playing, or
 * ended and kept for {@code --demo-retention}), how many bytes they may reserve (a share of the memory budget,
 * {@link DemoSettings#BUDGET_SHARE_DIVISOR}), and how fast new ones may start (a token bucket of
 * {@link DemoSettings#BURST_RUNS} refilled at {@code --demo-rate} per minute). A refused start costs nothing.
 *
 * <p>Any thread (event loops admit, the simulator's threads release); one small lock, taken once per demo
 * request and once per demo run's end, never per event.
 */
final class DemoQuota {
    /** Why a start was refused; null from {@link #tryAdmit} means admitted. */
    enum Refusal { RATE_LIMITED, RUNS_FULL, BYTES_FULL }

    private final int maxRuns;
    private final long maxBytes;
    private final double tokensPerNano;
    private final int burst;
    private final LongSupplier nanoClock;
    private int runs;
    private long bytes;
    private double tokens;
    private long refilledAtNanos;

    /**
     * @param maxBytes the bytes all demo runs held may reserve
     * @param ratePerMinute runs started per minute once the burst is spent
     */
    DemoQuota(int maxRuns, long maxBytes, int ratePerMinute, int burst, LongSupplier nanoClock) {
        if (maxRuns < 1 || maxBytes < 1 || ratePerMinute < 1 || burst < 1) {
            throw new IllegalArgumentException("demo quota needs positive limits, not " + maxRuns + " runs, "
                    + maxBytes + " bytes, " + ratePerMinute + "/min, burst " + burst);
        }
        this.maxRuns = maxRuns;
        this.maxBytes = maxBytes;
        this.tokensPerNano = ratePerMinute / (double) TimeUnit.MINUTES.toNanos(1);
        this.burst = burst;
        this.nanoClock = nanoClock;
        this.tokens = burst;
        this.refilledAtNanos = nanoClock.getAsLong();
    }

    /** Reserves a run of {@code runBytes}; null when admitted, else why not (nothing reserved). */
    synchronized Refusal tryAdmit(long runBytes) {
        if (runs >= maxRuns) {
            return Refusal.RUNS_FULL;
        }
        if (bytes + runBytes > maxBytes) {
            return Refusal.BYTES_FULL;
        }
        refill();
        if (tokens < 1) {
            return Refusal.RATE_LIMITED;
        }
        tokens -= 1;
        runs++;
        bytes += runBytes;
        return null;
    }

    /** Gives back a run admitted with {@code runBytes} (deleted, or never created). */
    synchronized void release(long runBytes) {
        runs--;
        bytes -= runBytes;
    }

    /** Seconds until the rate limit lets the next run start (at least 1), for {@code Retry-After}. */
    synchronized long secondsUntilNextToken() {
        refill();
        double missing = Math.max(0, 1 - tokens);
        return Math.max(1, (long) Math.ceil(missing / tokensPerNano / 1e9));
    }

    private void refill() {
        long now = nanoClock.getAsLong();
        tokens = Math.min(burst, tokens + (now - refilledAtNanos) * tokensPerNano);
        refilledAtNanos = now;
    }

    synchronized int runsHeld() {
        return runs;
    }

    synchronized long bytesHeld() {
        return bytes;
    }

    int maxRuns() {
        return maxRuns;
    }

    long maxBytes() {
        return maxBytes;
    }
}
