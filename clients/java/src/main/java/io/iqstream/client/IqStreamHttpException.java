package io.iqstream.client;

import java.time.Duration;
import java.util.Optional;

/**
 * The server refused a request: an HTTP status of 400 or more, with the error code and message
 * of its JSON body ({@code {"error":"bad_json","message":"...","position":3}}).
 *
 * <p>Codes by status: 400 {@code bad_run_id | bad_json | missing_type | bad_request}; 401
 * {@code unauthenticated}; 403 {@code forbidden}; 404 {@code not_found}; 409 {@code
 * publisher_active | run_ended | run_lost | event_id_mismatch | run_stopped} (run_stopped is thrown as its own
 * type, {@link RunStoppedException}); 410 {@code gone}; 413 {@code event_too_large | run_too_large};
 * 415 {@code unsupported_media_type}; 503 {@code over_budget | draining} (with Retry-After).
 */
public class IqStreamHttpException extends IqStreamException {
  private static final long serialVersionUID = 1L;

  private final int statusCode;
  private final String errorCode;
  private final String serverMessage;
  private final long position;
  private final long lastEventId;
  private final Duration retryAfter;

  IqStreamHttpException(
      String runId, int statusCode, String errorCode, String serverMessage, long position, Duration retryAfter) {
    this(runId, statusCode, errorCode, serverMessage, position, -1, retryAfter);
  }

  IqStreamHttpException(String runId, int statusCode, String errorCode, String serverMessage, long position,
      long lastEventId, Duration retryAfter) {
    super(describe(runId, statusCode, errorCode, serverMessage, position), runId);
    this.statusCode = statusCode;
    this.errorCode = errorCode;
    this.serverMessage = serverMessage;
    this.position = position;
    this.lastEventId = lastEventId;
    this.retryAfter = retryAfter;
  }

  private static String describe(String runId, int status, String code, String message, long position) {
    StringBuilder text = new StringBuilder("IQ-Stream answered ").append(status);
    if (code != null) text.append(' ').append(code);
    if (runId != null) text.append(" for run '").append(runId).append('\'');
    if (position > 0) text.append(" at event ").append(position).append(" of the request");
    if (message != null && !message.isEmpty()) text.append(": ").append(message);
    return text.toString();
  }

  /** The HTTP status (400 or more). */
  public int statusCode() {
    return statusCode;
  }

  /** The server's error code ({@code run_ended}, {@code bad_json} ...), or null if the body had none. */
  public String errorCode() {
    return errorCode;
  }

  /** The server's human-readable message, or null. */
  public String serverMessage() {
    return serverMessage;
  }

  /** For a bad event: its 1-based position within the refused request's body; else 0. */
  public long position() {
    return position;
  }

  /** For a refused publish: the id of the run's last event (what the run holds), or -1 if not given. */
  public long lastEventId() {
    return lastEventId;
  }

  /** The Retry-After of a 503, if the server sent one. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }
}
