package io.iqstream.server.auth;

/**
 * A right a token can grant on a run (or, for {@link #THREADS}, on a thread id), named by its key in the
 * {@code iqstream} claim.
 *
 * <p>Immutable; any thread.
 */
public enum Right {
    /** Append events to the run, delete it: {@code "publish"}. */
    PUBLISH("publish"),
    /** Read the run's event stream: {@code "subscribe"}. */
    SUBSCRIBE("subscribe"),
    /**
     * List a thread's runs ({@code GET /v1/threads/{threadId}/runs}): {@code "threads"}, patterns matched against
     * thread ids the way the others are matched against run ids.
     */
    THREADS("threads");

    private final String claimKey;

    Right(String claimKey) {
        this.claimKey = claimKey;
    }

    /** The key of this right's pattern list inside the {@code iqstream} claim. */
    public String claimKey() {
        return claimKey;
    }
}
