package io.iqstream.server.run;

/**
 * One held run of a thread as the thread index saw it at one instant: immutable, so a worker can hand it to the
 * loop that answers {@code GET /v1/threads/{threadId}/runs}.
 *
 * @param runId the run's id
 * @param ended whether the run has ended (RUN_FINISHED, RUN_ERROR, or a server-made end)
 * @param events the run's event count, which is also its last event id
 * @param startedAtMs when its RUN_STARTED arrived, epoch ms
 * @param endedAtMs when it ended, epoch ms; 0 while running
 * @param startedNanos {@link System#nanoTime()} when the run was created, for ordering runs of several workers
 */
public record ThreadRun(String runId, boolean ended, int events, long startedAtMs, long endedAtMs,
        long startedNanos) {}
