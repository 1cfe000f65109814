package io.iqstream.client;

/**
 * A publish could not be completed: the connection failed and the retries ran out, the run
 * ended while reconnecting, or the server's answer could not be read. HTTP refusals are the
 * subclass {@link IqStreamHttpException}.
 *
 * <p>Unchecked, so that streaming callbacks (a model's token handler) can call the publisher
 * without wrapping.
 */
public class IqStreamException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The run the failure is about, or null. */
  private final String runId;

  public IqStreamException(String message, String runId, Throwable cause) {
    super(message, cause);
    this.runId = runId;
  }

  public IqStreamException(String message, String runId) {
    this(message, runId, null);
  }

  /** The run the failure is about, or null. */
  public String runId() {
    return runId;
  }
}
