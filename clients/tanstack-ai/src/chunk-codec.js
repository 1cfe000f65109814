/**
 * TanStack chunk <-> IQ-Stream event. A chunk is an AG-UI event and is stored as its own JSON, byte for byte
 * (`JSON.stringify(chunk)`), with one exception that IQ-Stream's terminal rule forces:
 *
 * `chat()` with server tools emits `RUN_FINISHED` with finish reason `tool_calls` in the middle of its stream
 * (the end of one model turn; the tool results and the next turn follow in the same stream). In IQ-Stream a
 * `RUN_FINISHED` ends the run, so such an intermediate one is stored wrapped in an AG-UI `CUSTOM` event,
 * `{"type":"CUSTOM","name":"tanstack.run_finished","value":<the chunk>}`, and unwrapped on read: TanStack's
 * readers get the chunk as it was produced, a plain AG-UI reader of the run sees a `CUSTOM` event it may ignore.
 * "Intermediate" is TanStack's own rule (`isIntermediateToolTurn` in @tanstack/ai-client): a `RUN_FINISHED`
 * whose `finishReason` (top level, else `metadata.tanstack.finishReason`) is `tool_calls` and whose `outcome`
 * is not an interrupt.
 *
 * `close()` on a run the producer left without a terminal chunk ends it with a `RUN_FINISHED` of its own,
 * marked `"result":{"iqstream.closed":true}`: an AG-UI reader sees the run finish, TanStack's readers skip it
 * (they get exactly the produced chunks, then the end, as with `memoryStream`).
 *
 * A producer's own chunk that looks like either (a `CUSTOM` of that name, a `RUN_FINISHED` with that result)
 * is wrapped too, so unwrapping is exact.
 *
 * @module
 */

export const WRAPPED_NAME = "tanstack.run_finished";
const CLOSED_KEY = "iqstream.closed";

/** The terminal event `close()` appends to a run left open: a RUN_FINISHED readers of TanStack skip. */
export function closeEvent({ threadId, runId }) {
  return { type: "RUN_FINISHED", threadId, runId, result: { [CLOSED_KEY]: true } };
}

/** True for the event {@link closeEvent} makes (as stored: a producer's look-alike is stored wrapped). */
export function isCloseEvent(event) {
  return event.type === "RUN_FINISHED" && event.result !== null && typeof event.result === "object"
    && event.result[CLOSED_KEY] === true;
}

function isIntermediateRunFinished(chunk) {
  if (chunk.type !== "RUN_FINISHED" || chunk.outcome?.type === "interrupt") return false;
  const reason = chunk.finishReason !== undefined ? chunk.finishReason : chunk.metadata?.tanstack?.finishReason;
  return reason === "tool_calls";
}

/** The event JSON (one line) stored for `chunk`; throws a TypeError for a chunk with no string `type`. */
export function encodeChunk(chunk) {
  if (chunk === null || typeof chunk !== "object" || typeof chunk.type !== "string") {
    throw new TypeError(`a chunk must be an object with a string type, got ${JSON.stringify(chunk)?.slice(0, 80)}`);
  }
  const wrap = isIntermediateRunFinished(chunk) || (chunk.type === "CUSTOM" && chunk.name === WRAPPED_NAME) || isCloseEvent(chunk);
  return JSON.stringify(wrap ? { type: "CUSTOM", name: WRAPPED_NAME, value: chunk } : chunk);
}

/** The chunk an event (parsed) stands for. */
export function decodeChunk(event) {
  return event.type === "CUSTOM" && event.name === WRAPPED_NAME && event.value !== null && typeof event.value === "object"
    ? event.value
    : event;
}

/** True when the stored event ends the IQ-Stream run (and so the TanStack run). */
export function isTerminalEvent(event) {
  return event.type === "RUN_FINISHED" || event.type === "RUN_ERROR";
}
