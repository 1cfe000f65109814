/**
 * @iqstream/client: read IQ-Stream runs in browsers and Node 20+.
 *
 * - IqStreamAgent: an AG-UI agent (drop-in for HttpAgent) with resumable runs.
 * - readRun: the run's events as an async iterator, reconnecting with Last-Event-ID.
 * - followRun: readRun with a stored cursor that survives a page reload.
 *
 * @module
 */
export { IqStreamAgent } from "./agent.js";
export { readRun, TERMINAL_EVENT_TYPES } from "./reader.js";
export { followRun } from "./resume.js";
export { SseParser } from "./sse.js";
export { memoryStorage, defaultStorage } from "./storage.js";
export {
  IqStreamError,
  UnauthorizedError,
  ForbiddenError,
  RunNotFoundError,
  RunGoneError,
  HttpStatusError,
  ConnectionLostError,
  StreamIntegrityError,
} from "./errors.js";
