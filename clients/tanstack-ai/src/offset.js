/**
 * Offsets of `iqstreamStream`: the cursor TanStack AI puts on each SSE `id:` line and gets back as
 * `Last-Event-ID` (or `?offset=`). Opaque to TanStack, but they name the IQ-Stream run as well as the event in
 * it, because TanStack's clients resume by re-sending the same request with `Last-Event-ID` alone.
 *
 *     iq1:<IQ-Stream run id>:<event id, 10 digits>      e.g. iq1:tsa.run-1764500000-k3x9:0000000042
 *
 * The event id is IQ-Stream's own (1, 2, 3... in its run), zero-padded to the width of its largest value
 * (2147483647), so the offsets of one run sort as strings in append order. A run id is 1-128 of
 * `[A-Za-z0-9._~:-]` (IQ-Stream's rule): no CR, LF, NUL or space, as an SSE id must not hold.
 *
 * @module
 */

export const OFFSET_PREFIX = "iq1:";
const ID_DIGITS = 10;
const MAX_EVENT_ID = 2147483647;
const RUN_ID = /^[A-Za-z0-9._~:-]{1,128}$/;

/** True for a run id IQ-Stream accepts as it is. */
export function isIqRunId(runId) {
  return typeof runId === "string" && RUN_ID.test(runId);
}

/** The offset of event `eventId` (1-based) of IQ-Stream run `iqRunId`. */
export function encodeOffset(iqRunId, eventId) {
  return `${OFFSET_PREFIX}${iqRunId}:${String(eventId).padStart(ID_DIGITS, "0")}`;
}

/**
 * The run and event an offset names; throws a TypeError naming the offset when it is not one this adapter
 * minted (another adapter's, a truncated one, an id out of range).
 * @returns {{ iqRunId: string, eventId: number }}
 */
export function decodeOffset(offset) {
  const fail = (why) => new TypeError(`not an iqstreamStream offset (${why}): ${JSON.stringify(offset)}`);
  if (typeof offset !== "string" || !offset.startsWith(OFFSET_PREFIX)) throw fail(`expected "${OFFSET_PREFIX}<run id>:<event id>"`);
  const rest = offset.slice(OFFSET_PREFIX.length);
  const colon = rest.lastIndexOf(":");
  const iqRunId = rest.slice(0, colon);
  const digits = rest.slice(colon + 1);
  if (colon < 1 || !isIqRunId(iqRunId)) throw fail("bad run id");
  if (digits.length !== ID_DIGITS || !/^\d+$/.test(digits)) throw fail(`the event id must be ${ID_DIGITS} digits`);
  const eventId = Number(digits);
  if (eventId < 1 || eventId > MAX_EVENT_ID) throw fail("event id out of range");
  return { iqRunId, eventId };
}
