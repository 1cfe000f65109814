package io.iqstream.client;

/**
 * The run was stopped while this publisher was sending: someone with the publish right sent {@code DELETE
 * /v1/runs/{runId}} and the server answered the open publishing request 409 {@code run_stopped}. The run is ended
 * (its readers got {@code RUN_ERROR} with code {@code STOPPED}); the producer should abort its agent and send
 * nothing more. {@link #lastEventId()} is the id of the run's last event, the stop's {@code RUN_ERROR}.
 *
 * <p>Thrown by {@link RunPublisher#send} and {@link RunPublisher#finish} once the stop is seen; {@link
 * RunPublisher#stopped()} says so without sending.
 */
public final class RunStoppedException extends IqStreamHttpException {
  private static final long serialVersionUID = 1L;

  /** The server's error code for a stopped run. */
  public static final String CODE = "run_stopped";

  RunStoppedException(String runId, String serverMessage, long position, long lastEventId) {
    super(runId, 409, CODE, serverMessage, position, lastEventId, null);
  }
}
