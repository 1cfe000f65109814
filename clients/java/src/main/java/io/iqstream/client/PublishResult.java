package io.iqstream.client;

/**
 * The server's answer to a completed publish request: {@code 200
 * {"runId":"r1","lastEventId":N,"ended":true|false}}.
 *
 * @param runId the run
 * @param lastEventId the id of the run's last event (ids are 1, 2, 3... so also its event count)
 * @param ended whether the run has ended (a RUN_FINISHED or RUN_ERROR was appended)
 */
public record PublishResult(String runId, long lastEventId, boolean ended) {}
