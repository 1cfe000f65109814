/**
 * Reads one run from IQ-Stream (`GET /v1/runs/{runId}/events`) as an async iterator of
 * numbered AG-UI events, reconnecting by itself.
 *
 * Implementation notes
 * - Invariant: the iterator yields event ids lastEventId+1, +2, ... with no gap and no
 *   repeat, across any number of reconnects. Every (re)connection asks for the events after
 *   the last id it yielded (`Last-Event-ID` header, or `?lastEventId=` in query mode). The
 *   server never sends an id at or below it, nor one that skips ahead: either is a server
 *   fault, and ends the read with a {@link StreamIntegrityError} (`code` "duplicate_event" or
 *   "event_gap", with `expectedId` and `receivedId`), after handing on every event before it.
 *   A duplicate is reported, not hidden: silently dropping it would hide a server that replays.
 * - It uses fetch and a streaming SSE parser, not EventSource, so it runs in Node and in
 *   browsers, can send an Authorization header, and can tell 401/403/404/410 apart
 *   (EventSource only reports "error").
 * - Reconnect delay: the server's `retry:` (1000 ms by default) after a drop, doubled for each
 *   further failure in a row, capped at `maxDelayMs`, with +-10% jitter; a 503 waits at least
 *   its Retry-After. A failure "in a row" is a connection that delivered neither an event nor
 *   a heartbeat. After `maxAttempts` of those, {@link ConnectionLostError}.
 * - 401/403/404/410 and other 4xx are not retried: they end the iteration with a typed error.
 * - 204 (the run ended with the event we already have) and the terminal event
 *   (RUN_FINISHED/RUN_ERROR) end the iteration normally.
 * - Stopping: abort `signal`, or leave the `for await` loop; either cancels the request.
 *
 * @module
 */

import { SseParser } from "./sse.js";
import {
  ConnectionLostError,
  IqStreamError,
  StreamIntegrityError,
  errorForStatus,
} from "./errors.js";

/** Event types that end a run. */
export const TERMINAL_EVENT_TYPES = Object.freeze(["RUN_FINISHED", "RUN_ERROR"]);

/**
 * @typedef {string | (() => string | undefined | Promise<string | undefined>)} TokenSource
 * A subscribe token, or a function asked for one before every (re)connection (so a token
 * that expires during a long run can be refreshed).
 */

/**
 * @typedef {object} ReadRunOptions
 * @property {string} baseUrl           IQ-Stream base URL, e.g. "https://relay.example.com"
 * @property {string} runId
 * @property {TokenSource} [token]      subscribe token (JWT); omit if auth is off
 * @property {"headers"|"query"} [transport]  "headers" (default): Authorization and
 *   Last-Event-ID headers. "query": ?access_token= and ?lastEventId=, which keeps a
 *   cross-origin browser request free of a CORS preflight.
 * @property {number} [lastEventId]     start after this event id (default 0: from the start)
 * @property {typeof fetch} [fetch]
 * @property {AbortSignal} [signal]
 * @property {Record<string, string>} [headers]  extra request headers
 * @property {number} [maxAttempts]     failed connections in a row before giving up (default 10)
 * @property {number} [initialDelayMs]  reconnect delay until the server sends `retry:` (1000)
 * @property {number} [maxDelayMs]      cap of the growing delay (30000)
 * @property {(info: { attempt: number, lastEventId: number }) => void} [onConnect]
 *   called when a connection is answered 200
 * @property {(info: { error: unknown, attempt: number, delayMs: number, lastEventId: number }) => void} [onReconnect]
 *   called before waiting to reconnect
 */

/**
 * @typedef {object} RunEvent
 * @property {number} id        the event's id in its run (1, 2, 3...)
 * @property {{ type: string, [key: string]: unknown }} event  the AG-UI event, parsed
 * @property {string} data      the event's JSON exactly as relayed
 */

/**
 * Reads a run's events from `lastEventId + 1` until its terminal event.
 * @param {ReadRunOptions} options
 * @returns {AsyncGenerator<RunEvent, void, undefined>}
 */
export async function* readRun(options) {
  const {
    baseUrl,
    runId,
    token,
    transport = "headers",
    signal,
    headers: extraHeaders = {},
    maxAttempts = 10,
    initialDelayMs = 1000,
    maxDelayMs = 30000,
    onConnect,
    onReconnect,
  } = options;
  const fetchFn = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  if (typeof runId !== "string" || runId.length === 0) throw new TypeError("readRun: runId is required");
  if (typeof baseUrl !== "string" || baseUrl.length === 0) throw new TypeError("readRun: baseUrl is required");
  const eventsUrl = `${baseUrl.replace(/\/+$/, "")}/v1/runs/${encodeURIComponent(runId)}/events`;

  let lastEventId = options.lastEventId ?? 0;
  let retryMs = initialDelayMs;
  let failuresInRow = 0;
  let attempt = 0;

  while (true) {
    if (signal?.aborted) return;
    attempt++;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    /** @type {unknown} */
    let failure;
    let retryAfterMs = 0;
    let healthy = false;
    /** @type {ReadableStreamDefaultReader<Uint8Array>|undefined} */
    let reader;
    try {
      const url = new URL(eventsUrl);
      const headers = { Accept: "text/event-stream", ...extraHeaders };
      const tokenValue = typeof token === "function" ? await token() : token;
      if (transport === "query") {
        if (tokenValue) url.searchParams.set("access_token", tokenValue);
        if (lastEventId > 0) url.searchParams.set("lastEventId", String(lastEventId));
      } else {
        if (tokenValue) headers.Authorization = `Bearer ${tokenValue}`;
        if (lastEventId > 0) headers["Last-Event-ID"] = String(lastEventId);
      }
      const response = await fetchFn(url.toString(), {
        method: "GET",
        headers,
        signal: controller.signal,
        cache: "no-store",
      });

      if (response.status === 204) {
        // The run ended and we already hold its last event.
        await response.body?.cancel().catch(() => {});
        return;
      }
      if (!response.ok) {
        const { code, message } = await readErrorBody(response);
        if (response.status >= 500 || response.status === 429 || response.status === 408) {
          retryAfterMs = parseRetryAfterMs(response.headers.get("retry-after"));
          throw new IqStreamError(`IQ-Stream answered ${response.status}${code ? " " + code : ""}`, {
            status: response.status,
            code,
            runId,
          });
        }
        throw errorForStatus(response.status, code, message, runId);
      }
      if (!response.body) throw new IqStreamError("The response has no body to stream", { runId });

      onConnect?.({ attempt, lastEventId });
      reader = response.body.getReader();
      const decoder = new TextDecoder("utf-8");
      /** @type {RunEvent[]} */
      const ready = [];
      /** @type {unknown} */
      let parseError;
      const parser = new SseParser({
        onRetry: (ms) => {
          retryMs = ms;
        },
        onComment: () => {
          healthy = true;
        },
        onMessage: (message) => {
          if (parseError) return;
          if (message.id === undefined || !/^\d+$/.test(message.id)) {
            parseError = new StreamIntegrityError(`An event without a numeric id: '${message.id}'`, {
              runId,
              code: "bad_event_id",
            });
            return;
          }
          const id = Number(message.id);
          const expected = lastEventId + ready.length + 1;
          if (id < expected) {
            parseError = new StreamIntegrityError(
              `Event ${id} arrived again where ${expected} was expected: the server sent a duplicate`,
              { runId, code: "duplicate_event", expectedId: expected, receivedId: id },
            );
            return;
          }
          if (id > expected) {
            parseError = new StreamIntegrityError(
              `Event ${id} arrived where ${expected} was expected: events were skipped`,
              { runId, code: "event_gap", expectedId: expected, receivedId: id },
            );
            return;
          }
          let event;
          try {
            event = JSON.parse(message.data);
          } catch (cause) {
            parseError = new StreamIntegrityError(`Event ${id} is not JSON`, { runId, cause, code: "bad_event_json" });
            return;
          }
          ready.push({ id, event, data: message.data });
        },
      });

      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.push(decoder.decode(value, { stream: true }));
        // Hand on what parsed cleanly before a bad event, then fail.
        for (const item of ready.splice(0, ready.length)) {
          lastEventId = item.id;
          healthy = true;
          failuresInRow = 0;
          yield item;
          if (TERMINAL_EVENT_TYPES.includes(item.event?.type)) return;
          if (signal?.aborted) return;
        }
        if (parseError) throw parseError;
      }
      parser.push(decoder.decode());
      parser.end();
      failure = new IqStreamError("The stream ended before the run's terminal event", { runId });
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof IqStreamError && error.status !== undefined && !isRetryable(error.status)) {
        throw error;
      }
      if (error instanceof StreamIntegrityError) throw error;
      failure = error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      controller.abort();
      reader?.cancel().catch(() => {});
    }

    if (healthy) {
      failuresInRow = 0;
    } else {
      failuresInRow++;
    }
    if (failuresInRow >= maxAttempts) {
      throw new ConnectionLostError(
        `Gave up on run '${runId}' after ${failuresInRow} failed connections in a row (last event ${lastEventId})`,
        { runId, cause: failure },
      );
    }
    const backoffMs = Math.min(maxDelayMs, retryMs * 2 ** Math.max(0, failuresInRow - 1));
    const delayMs = Math.max(retryAfterMs, Math.round(backoffMs * (0.9 + Math.random() * 0.2)));
    onReconnect?.({ error: failure, attempt, delayMs, lastEventId });
    if (!(await sleep(delayMs, signal))) return;
  }
}

/** @param {number} status */
function isRetryable(status) {
  return status >= 500 || status === 429 || status === 408;
}

/**
 * @param {Response} response
 * @returns {Promise<{ code: string|undefined, message: string|undefined }>}
 */
async function readErrorBody(response) {
  let text = "";
  try {
    text = await response.text();
  } catch {
    return { code: undefined, message: undefined };
  }
  try {
    const body = JSON.parse(text);
    return {
      code: typeof body?.error === "string" ? body.error : undefined,
      message: typeof body?.message === "string" ? body.message : undefined,
    };
  } catch {
    return { code: undefined, message: text.slice(0, 200) || undefined };
  }
}

/**
 * @param {string|null} value  seconds or an HTTP date
 * @returns {number}
 */
function parseRetryAfterMs(value) {
  if (!value) return 0;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - Date.now());
}

/**
 * @param {number} ms
 * @param {AbortSignal|undefined} signal
 * @returns {Promise<boolean>} false when aborted
 */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
