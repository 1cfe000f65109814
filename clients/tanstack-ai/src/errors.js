/** A refused or failed call to IQ-Stream, with what the server said. @module */

export class IqStreamDurabilityError extends Error {
  /**
   * @param {string} message
   * @param {{ status?: number, code?: string, runId?: string, lastEventId?: number, cause?: unknown }} [details]
   */
  constructor(message, { status, code, runId, lastEventId, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "IqStreamDurabilityError";
    /** HTTP status of IQ-Stream's answer (absent for a network failure). */
    this.status = status;
    /** IQ-Stream's error code: `event_id_mismatch`, `run_ended`, `forbidden`, ... */
    this.code = code;
    /** The IQ-Stream run id. */
    this.runId = runId;
    /** The run's last event id as IQ-Stream reported it, when it did. */
    this.lastEventId = lastEventId;
  }
}
