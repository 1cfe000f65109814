package io.iqstream.client;

/**
 * {@code GET /v1/runs/{runId}}: what the server holds for a run.
 *
 * @param runId the run
 * @param events events in the run (also the id of its last event)
 * @param bytes bytes held for its events
 * @param ended whether its terminal event has been appended
 * @param subscribers subscribers reading it now
 * @param ageMs milliseconds since it was created
 * @param publishing whether a publish request is open on it now (false if the server does not say)
 */
public record RunStatus(
    String runId, long events, long bytes, boolean ended, int subscribers, long ageMs, boolean publishing) {}
