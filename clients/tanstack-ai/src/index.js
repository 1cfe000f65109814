/**
 * @iqstream/tanstack-ai: TanStack AI's delivery durability (`StreamDurability`) kept in IQ-Stream, so a
 * resumable run survives server instances, reloads and the producer's process.
 *
 *     toServerSentEventsResponse(stream, { durability: { adapter: iqstreamStream(request) } })
 *
 * `iqstreamStream` takes `memoryStream`'s arguments (the incoming `Request`, or `{ runId, offset }`) and
 * returns an `UpsertableStreamDurability` whose log is one IQ-Stream run, `<prefix><runId>`:
 * - `append` publishes a batch (one POST continued with `Last-Event-ID`) and resolves with IQ-Stream's ids as
 *   offsets once IQ-Stream holds it;
 * - `read` is a Last-Event-ID subscription, tailing until the run's terminal event;
 * - `snapshot` is a tail read (`?live=false`): what IQ-Stream holds now, without waiting;
 * - `close` leaves a run that has its terminal chunk as it is, and ends one that has none with a `RUN_FINISHED`
 *   that TanStack's readers skip (they end as with `memoryStream`; see chunk-codec.js);
 * - `upsert` re-appends at offsets this adapter minted: an identical overlapping range adds nothing.
 * A producer that dies mid-run is ended by IQ-Stream (`RUN_ERROR` `PUBLISHER_LOST`) one lease after its last
 * request (see run-log.js).
 *
 * @module
 */

import { createHash, randomUUID } from "node:crypto";
import { resolveResumeRunId } from "@tanstack/ai";
import { closeEvent, decodeChunk, encodeChunk, isCloseEvent } from "./chunk-codec.js";
import { IqStreamDurabilityError } from "./errors.js";
import { decodeOffset, encodeOffset, isIqRunId } from "./offset.js";
import { RunLog } from "./run-log.js";

export { IqStreamDurabilityError } from "./errors.js";

const DEFAULT_PREFIX = "tsa.";
const DEFAULT_LEASE_MS = 5000;
const DEFAULT_MAX_PAUSE_MS = 5 * 60_000;

/**
 * The IQ-Stream run id of TanStack run `runId`: `<prefix><runId>` when that is a valid IQ-Stream run id (1-128
 * of `[A-Za-z0-9._~:-]`, not starting with `~` after the prefix), else `<prefix>~<sha-256 of runId, base64url>`.
 */
export function iqRunIdOf(runId, prefix = DEFAULT_PREFIX) {
  if (typeof runId !== "string" || runId.length === 0 || /[\r\n]/.test(runId)) {
    throw new TypeError(`Invalid runId (must be non-empty and contain no CR/LF): ${JSON.stringify(runId)}`);
  }
  const plain = `${prefix}${runId}`;
  if (isIqRunId(plain) && !runId.startsWith("~")) return plain;
  const hashed = `${prefix}~${createHash("sha256").update(runId, "utf8").digest("base64url")}`;
  if (!isIqRunId(hashed)) throw new TypeError(`prefix ${JSON.stringify(prefix)} does not make a valid IQ-Stream run id`);
  return hashed;
}

function isRequest(source) {
  return source !== null && typeof source === "object" && typeof source.url === "string"
    && typeof source.headers?.get === "function";
}

/** `memoryStream`'s rule: the `Last-Event-ID` header, else `?offset`. */
function readResumeOffset(request) {
  const header = request.headers.get("Last-Event-ID");
  if (header) return header;
  try {
    return new URL(request.url).searchParams.get("offset");
  } catch {
    return null;
  }
}

const isJoinOffset = (offset) => offset === "-1" || offset === "now";

/**
 * A TanStack AI `UpsertableStreamDurability` backed by IQ-Stream.
 *
 * @param {Request | { runId: string, offset?: string | null }} source  the incoming request (its run from the
 *   resume offset, else `X-Run-Id` / `?runId`, else a new UUID), or the run and offset explicitly
 * @param {object} [options]
 * @param {string} [options.url]  IQ-Stream's base URL (default `IQSTREAM_URL`)
 * @param {string | (() => string | Promise<string>)} [options.token]  a JWT with `publish` and `subscribe` on
 *   `<prefix>*` (default `IQSTREAM_TOKEN`), or a function asked before every request
 * @param {string} [options.prefix]  IQ-Stream run ids of TanStack runs start with it (default `tsa.`)
 * @param {number} [options.leaseMs]  publisher lease (default `IQSTREAM_PUBLISHER_LEASE_MS`, else 5000): IQ-Stream
 *   ends the run with `PUBLISHER_LOST` when the producer has had no request open for this long; 0 sends none
 * @param {number} [options.maxPauseMs]  the longest pause between batches kept alive (default 300000); a
 *   producer silent for longer is let go, and the lease ends its run
 * @param {typeof fetch} [options.fetch]
 */
export function iqstreamStream(source, options = {}) {
  const url = options.url ?? process.env.IQSTREAM_URL;
  if (!url) throw new TypeError("iqstreamStream: IQ-Stream's address is missing: pass { url } or set IQSTREAM_URL");
  const token = options.token ?? process.env.IQSTREAM_TOKEN;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const leaseEnv = process.env.IQSTREAM_PUBLISHER_LEASE_MS;
  const leaseMs = options.leaseMs ?? (leaseEnv ? Number(leaseEnv) : DEFAULT_LEASE_MS);
  if (!Number.isInteger(leaseMs) || leaseMs < 0) throw new TypeError(`iqstreamStream: leaseMs must be a non-negative integer, got ${leaseMs}`);
  const maxPauseMs = options.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS;
  if (!(maxPauseMs >= 0)) throw new TypeError(`iqstreamStream: maxPauseMs must be a non-negative number, got ${maxPauseMs}`);

  let resumeOffset;
  let iqRunId;
  if (isRequest(source)) {
    resumeOffset = readResumeOffset(source);
    const named = resolveResumeRunId(source);
    const namedIq = named === null ? null : iqRunIdOf(named, prefix);
    if (resumeOffset !== null && !isJoinOffset(resumeOffset)) {
      iqRunId = decodeOffset(resumeOffset).iqRunId;
      if (namedIq !== null && namedIq !== iqRunId) {
        throw new TypeError(`the resume offset belongs to run ${JSON.stringify(iqRunId)}, not ${JSON.stringify(namedIq)}`);
      }
    } else {
      iqRunId = namedIq ?? iqRunIdOf(randomUUID(), prefix);
    }
  } else if (source !== null && typeof source === "object") {
    resumeOffset = source.offset ?? null;
    iqRunId = iqRunIdOf(source.runId, prefix);
  } else {
    throw new TypeError("iqstreamStream: pass the incoming Request or { runId, offset }");
  }
  if (resumeOffset !== null && !isJoinOffset(resumeOffset)) decodeOffset(resumeOffset);

  const log = new RunLog({ baseUrl: url, iqRunId, token, leaseMs, maxPauseMs, fetch: options.fetch ?? ((u, i) => globalThis.fetch(u, i)) });
  /** The ids the close event names (AG-UI's RUN_FINISHED has them): from the run's RUN_STARTED, when appended. */
  const runIds = { threadId: "", runId: iqRunId };

  /** The event id an offset names in this run (the threshold a read starts after). */
  const eventIdOf = (offset) => {
    const decoded = decodeOffset(offset);
    if (decoded.iqRunId !== iqRunId) {
      throw new TypeError(`offset ${JSON.stringify(offset)} belongs to run ${JSON.stringify(decoded.iqRunId)}, not ${JSON.stringify(iqRunId)}`);
    }
    return decoded.eventId;
  };

  const entry = ({ id, event }) => ({ offset: encodeOffset(iqRunId, id), chunk: decodeChunk(event) });

  return {
    /** The IQ-Stream run this adapter writes and reads. */
    iqRunId,

    resumeFrom: () => resumeOffset,

    async append(chunks) {
      const started = chunks.find((c) => c?.type === "RUN_STARTED");
      if (started && runIds.threadId === "") Object.assign(runIds, { threadId: String(started.threadId ?? ""), runId: String(started.runId ?? iqRunId) });
      const lines = chunks.map(encodeChunk);
      if (lines.length === 0) return [];
      const ids = await log.append(lines);
      return ids.map((id) => encodeOffset(iqRunId, id));
    },

    async *read(offset, signal) {
      let after;
      if (offset === "-1") after = 0;
      else if (offset === "now") after = (await log.status())?.lastEventId ?? 0;
      else after = eventIdOf(offset);
      for await (const item of log.events(after, { signal })) {
        if (!isCloseEvent(item.event)) yield entry(item);
      }
    },

    async snapshot() {
      return (await log.tail()).filter((item) => !isCloseEvent(item.event)).map(entry);
    },

    close: () => log.close(JSON.stringify(closeEvent(runIds))),

    async upsert(entries) {
      if (!Array.isArray(entries)) throw new TypeError("iqstreamStream.upsert: entries must be an array");
      // 1. the batch on its own: dense, our offsets, no repeats
      const planned = [];
      const seen = new Set();
      for (let i = 0; i < entries.length; i++) {
        if (!(i in entries) || entries[i] === undefined) throw new TypeError(`iqstreamStream.upsert: entries[${i}] is missing; entries must be dense`);
        const { chunk, offset } = entries[i];
        let eventId;
        try {
          eventId = eventIdOf(offset);
        } catch (cause) {
          throw new TypeError(`iqstreamStream.upsert: entries[${i}].offset ${JSON.stringify(offset)} is not an offset of this run: ${cause.message}`);
        }
        if (seen.has(offset)) throw new TypeError(`iqstreamStream.upsert: entries[${i}].offset ${JSON.stringify(offset)} is repeated within the batch`);
        seen.add(offset);
        planned.push({ index: i, offset, eventId, line: encodeChunk(chunk) });
      }
      // 2. against the log: a stored offset must hold the same bytes (IQ-Stream's log is append-only), a new
      //    one must come right after the tail (IQ-Stream numbers events 1, 2, 3... with no hole)
      const log0 = await log.tail();
      const tail = log0.length === 0 ? 0 : log0[log0.length - 1].id;
      const fresh = [];
      let nextId = tail + 1;
      for (const p of planned) {
        if (p.eventId <= tail) {
          const have = log0[p.eventId - 1];
          if (have?.id !== p.eventId || have.data !== p.line) {
            throw new IqStreamDurabilityError(
              `iqstreamStream.upsert: entries[${p.index}] differs from the chunk stored at ${p.offset}; IQ-Stream's log is append-only, so a stored chunk cannot be replaced`,
              { runId: iqRunId, lastEventId: tail });
          }
        } else if (p.eventId === nextId) {
          fresh.push(p.line);
          nextId++;
        } else {
          throw new IqStreamDurabilityError(
            `iqstreamStream.upsert: entries[${p.index}].offset ${p.offset} is not stored and is not the next one (${encodeOffset(iqRunId, nextId)}): a new offset must follow the tail with no hole`,
            { runId: iqRunId, lastEventId: tail });
        }
      }
      // 3. only then append the new ones, continuing after the tail seen (409 if the run moved meanwhile)
      if (fresh.length > 0) await log.append(fresh, tail);
      return planned.map((p) => p.offset);
    },
  };
}
