/**
 * Typed errors for reading a run from IQ-Stream.
 *
 * The server answers errors as JSON `{"error": "<code>", "message": "<text>"}`. Statuses that
 * a retry cannot fix (400, 401, 403, 404, 410, other 4xx) end the read at once with one of
 * these; network failures, 5xx and 503 are retried by the reader, and only when retries are
 * exhausted does it give up with {@link ConnectionLostError}.
 *
 * @module
 */

export class IqStreamError extends Error {
  /**
   * @param {string} message
   * @param {object} [details]
   * @param {number} [details.status]  HTTP status, when the error is an HTTP answer
   * @param {string} [details.code]    the server's error code (`not_found`, `gone`, ...)
   * @param {string} [details.runId]
   * @param {unknown} [details.cause]
   */
  constructor(message, { status, code, runId, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    /** @type {number|undefined} */
    this.status = status;
    /** @type {string|undefined} */
    this.code = code;
    /** @type {string|undefined} */
    this.runId = runId;
  }
}

/** 401: no token, a bad signature or an expired token. Get a fresh token from your backend. */
export class UnauthorizedError extends IqStreamError {}

/** 403: a valid token without the subscribe right for this run. */
export class ForbiddenError extends IqStreamError {}

/** 404: the run does not exist (the server waited --await-run for it to appear). */
export class RunNotFoundError extends IqStreamError {}

/** 410: the run ended and its retention expired; its events are gone. */
export class RunGoneError extends IqStreamError {}

/** Any other answer a retry cannot fix (400 bad_run_id, bad_last_event_id, ...). */
export class HttpStatusError extends IqStreamError {}

/** The connection kept failing and the retry budget ran out. `cause` is the last failure. */
export class ConnectionLostError extends IqStreamError {}

/**
 * The server sent an event the read cannot hand on as the next one: `code` says which.
 * "duplicate_event" (an id at or below the last one handed on: a repeat), "event_gap" (an id
 * that skips ahead), "bad_event_id" (no numeric id), "bad_event_json" (data is not JSON).
 * For the first two, `expectedId` is the id that was due and `receivedId` the one that came.
 * The events before it were handed on; none after it are.
 */
export class StreamIntegrityError extends IqStreamError {
  /**
   * @param {string} message
   * @param {object} [details]  as {@link IqStreamError}, plus:
   * @param {number} [details.expectedId]
   * @param {number} [details.receivedId]
   */
  constructor(message, details = {}) {
    super(message, details);
    /** @type {number|undefined} */
    this.expectedId = details.expectedId;
    /** @type {number|undefined} */
    this.receivedId = details.receivedId;
  }
}

/**
 * Builds the typed error for a non-retryable HTTP answer.
 * @param {number} status
 * @param {string|undefined} code
 * @param {string|undefined} serverMessage
 * @param {string} runId
 * @returns {IqStreamError}
 */
export function errorForStatus(status, code, serverMessage, runId) {
  const detail = serverMessage ? `: ${serverMessage}` : "";
  const tag = code ? ` ${code}` : "";
  const details = { status, code, runId };
  switch (status) {
    case 401:
      return new UnauthorizedError(`IQ-Stream refused the token for run '${runId}' (401${tag})${detail}`, details);
    case 403:
      return new ForbiddenError(`The token has no subscribe right for run '${runId}' (403${tag})${detail}`, details);
    case 404:
      return new RunNotFoundError(`Run '${runId}' does not exist (404${tag})${detail}`, details);
    case 410:
      return new RunGoneError(`Run '${runId}' ended and has expired (410${tag})${detail}`, details);
    default:
      return new HttpStatusError(`IQ-Stream answered ${status}${tag} for run '${runId}'${detail}`, details);
  }
}
