package io.iqstream.server.warmup;

/**
 * What the warm-up did: the requests it made to the server's private loopback port for its runs, the runs it
 * published, the resumes it checked, the Durable Streams it wrote and read and the requests they took (apart), how
 * long it took, and why it stopped early ({@code failure}, null when it did not).
 */
public record WarmupReport(int requests, int runs, int resumes, int streams, int streamRequests, long elapsedMs,
        String failure) {

    /** The report of a warm-up that was turned off ({@code --warmup 0}). */
    public static final WarmupReport OFF = new WarmupReport(0, 0, 0, 0, 0, 0, null);

    /** True when it ran to its request count or time limit without a wrong answer or an I/O failure. */
    public boolean completed() {
        return failure == null;
    }
}
