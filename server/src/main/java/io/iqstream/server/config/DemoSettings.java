package io.iqstream.server.config;

/**
 * What {@code --demo} may make the server hold: the demo's own quota and rate limit, so a stranger looping
 * {@code POST /demo/api/runs} (it needs no token) meets them instead of the memory budget. Immutable, any thread.
 *
 * @param enabled {@code --demo} (dev mode turns the demo on whatever this says)
 * @param maxRuns {@code --demo-max-runs}: demo runs held at once, playing or kept for {@code retentionMs}
 * @param ratePerMinute {@code --demo-rate}: demo runs started per minute, across all clients, in bursts of at most
 *     {@link #BURST_RUNS}
 * @param retentionMs {@code --demo-retention}: how long an ended demo run stays readable before the demo deletes it
 */
public record DemoSettings(boolean enabled, int maxRuns, int ratePerMinute, long retentionMs) {
    /** Demo runs that may start at once after a quiet spell, before {@code --demo-rate} paces them. */
    public static final int BURST_RUNS = 10;
    /** Demo runs may reserve at most this fraction (1/n) of the memory budget. */
    public static final int BUDGET_SHARE_DIVISOR = 8;
}
