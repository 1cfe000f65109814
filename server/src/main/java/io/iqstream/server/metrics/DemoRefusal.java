package io.iqstream.server.metrics;

/**
 * Why {@code POST /demo/api/runs} did not create a run; the label is the {@code reason} of
 * {@code iqstream_demo_refusals_total}. Immutable; any thread.
 */
public enum DemoRefusal {
    /** More starts than {@code --demo-rate} allows (429 {@code rate_limited}). */
    RATE_LIMITED("rate_limited"),
    /** {@code --demo-max-runs} demo runs held already (429 {@code demo_quota}). */
    MAX_RUNS("max_runs"),
    /** The demo's share of the memory budget reserved already (429 {@code demo_quota}). */
    MEMORY_SHARE("memory_share"),
    /** The relay refused the run's first event for memory (503 {@code over_budget}). */
    OVER_BUDGET("over_budget"),
    /** The relay refused or failed the run's first event for another reason (503 {@code publish_failed}). */
    PUBLISH_FAILED("publish_failed"),
    /** The server is shutting down (503 {@code draining}). */
    DRAINING("draining");

    private final String label;

    DemoRefusal(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
