// @iqstream/resumable-stream: the API of `resumable-stream` 2.2 (createResumableStreamContext and its four
// methods, same arguments and return conventions) on IQ-Stream instead of Redis. A stream is an IQ-Stream run in
// the AI SDK's UI message stream protocol (docs/API.md, "AI SDK runs"): the producing instance POSTs the SSE text
// the AI SDK writes; any instance resumes it by reading the run back, so nothing lives in the producer's memory
// and no instance has to answer another's request.
import { createParser } from "eventsource-parser";
import { withTraceContext } from "./trace-context.js";

const RUN_ID = /^[A-Za-z0-9._~:-]{1,128}$/;
/**
 * The frames this package replays byte for byte: one `data: ` line and the blank line that ends it, what the AI SDK's
 * UI message stream writes. IQ-Stream keeps each frame's data and numbers it itself, so an `event:`, `id:` or
 * `retry:` field, several `data:` lines or CR line ends would come back changed: such a frame is refused (the
 * stream errors, naming it) instead of being replayed different from what was written. A frame of comments only
 * (keep-alive pings) is let through and not replayed (docs/AI-SDK.md says so).
 */
const EXACT_FRAME = /^(data: [^\r\n]*|:[^\r\n]*(\n:[^\r\n]*)*)$/;
const DONE_VALUE = "DONE";
// Each POST's first bytes: an SSE comment (IQ-Stream ignores it, docs/API.md). fetch sends a streamed request's
// head only with its first body chunk, and IQ-Stream makes the run when the head arrives: without it the run would
// wait for the model's first token, and createNewResumableStream's wait for the run with it (a status request
// every 2-100 ms until then: a dozen for a second's time to first token)
const OPENING = new TextEncoder().encode(": iqstream\n\n");
/** How often a broken read is resumed (Last-Event-ID) before the stream errors. */
const READ_RETRIES = 5;
/** The producer's retry pacing after a break: 200 ms doubling to 2 s (as @iqstream/client's publisher). */
const RETRY_INITIAL_MS = 200;
const RETRY_MAX_MS = 2000;

/**
 * Creates a context bound to one IQ-Stream address and token.
 * @param {import("./index.js").CreateResumableStreamContextOptions} options
 * @returns {import("./index.js").ResumableStreamContext}
 */
export function createResumableStreamContext(options = {}) {
  const url = trimSlash(options.url ?? process.env.IQSTREAM_URL ?? "");
  if (!url) {
    throw new TypeError("@iqstream/resumable-stream: no IQ-Stream address: set IQSTREAM_URL (e.g. "
      + "http://127.0.0.1:8080) or pass { url }");
  }
  const token = options.token ?? process.env.IQSTREAM_TOKEN;
  const waitUntil = options.waitUntil || (async (p) => await p);
  const prefix = options.keyPrefix || "resumable-stream";
  const leaseMs = options.publisherLeaseMs ?? 2000;
  if (!Number.isInteger(leaseMs) || leaseMs < 0) {
    throw new TypeError(`@iqstream/resumable-stream: publisherLeaseMs must be an integer >= 0 (got ${leaseMs})`);
  }
  const replayFinished = options.replayFinished === true;
  const restoreBufferBytes = options.restoreBufferBytes ?? 8 << 20;
  if (!Number.isInteger(restoreBufferBytes) || restoreBufferBytes < 0) {
    throw new TypeError("@iqstream/resumable-stream: restoreBufferBytes must be an integer >= 0 "
      + `(got ${restoreBufferBytes})`);
  }
  const batchMs = options.batchMs ?? 0;
  if (!Number.isInteger(batchMs) || batchMs < 0) {
    throw new TypeError(`@iqstream/resumable-stream: batchMs must be an integer >= 0 (got ${batchMs})`);
  }
  const maxRetries = options.maxRetries ?? 8;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`@iqstream/resumable-stream: maxRetries must be an integer >= 0 (got ${maxRetries})`);
  }
  const onError = options.onError ?? ((e) => console.error("@iqstream/resumable-stream:", e));
  const fetchGiven = options.fetch ?? globalThis.fetch;
  // every request carries the active OpenTelemetry context (traceparent, baggage) when the API is installed
  const fetchImpl = (target, init) => fetchGiven(target, { ...init, headers: withTraceContext({ ...init.headers }) });
  const auth = token ? { authorization: `Bearer ${token}` } : {};

  const runUrl = (streamId) => {
    const id = `${prefix}:${streamId}`;
    if (!RUN_ID.test(id)) {
      throw new TypeError(`@iqstream/resumable-stream: "${id}" (keyPrefix:streamId) is not an IQ-Stream run id: `
        + "1-128 characters of A-Z a-z 0-9 . _ ~ : -");
    }
    return `${url}/v1/runs/${id}`;
  };

  /** The run's status: null when IQ-Stream has no such run (never made, or expired), else its JSON. */
  async function status(streamId) {
    const res = await fetchImpl(runUrl(streamId), { headers: auth });
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) throw await httpError(res, `GET ${runUrl(streamId)}`);
    return res.json();
  }

  async function createNewResumableStream(streamId, makeStream) {
    const target = `${runUrl(streamId)}/events`;
    let finished;
    waitUntil(new Promise((resolve) => { finished = resolve; }));
    const encoder = new TextEncoder();
    let local;
    const localStream = new ReadableStream({ start(c) { local = c; } });
    const source = makeStream().getReader();
    let stopped = false;
    let settled = false;
    let pending = ""; // the producer's text after its last complete frame (a frame may span several strings)
    // Every data frame sent (the run's events 1..N, as bytes), to continue or restore the run after a break; null
    // once past restoreBufferBytes (a break then ends the publish, reported to onError).
    let sent = restoreBufferBytes > 0 ? [] : null;
    let sentCount = 0;
    let sentBytes = 0;
    let sawDone = false;
    let sourceEnded = false;
    let failed = false; // the producer's stream errored: never continued
    let body = null; // the open request's body, or null between requests
    // The frames taken since the last write to the open request: written together, one HTTP chunk (one write for
    // the app, one read for IQ-Stream) at most every batchMs, the first of a pause at once (batchMs, docs/AI-SDK.md)
    let unsent = [];
    let unsentBytes = 0;
    let lastWriteMs = -Infinity;
    let writeTimer = null;

    /** Writes the frames taken since the last write as one chunk of the open request's body. */
    function writeUnsent() {
      if (writeTimer !== null) { clearTimeout(writeTimer); writeTimer = null; }
      if (unsent.length === 0) return;
      let chunk = unsent[0];
      if (unsent.length > 1) {
        chunk = new Uint8Array(unsentBytes);
        let at = 0;
        for (const part of unsent) { chunk.set(part, at); at += part.length; }
      }
      unsent = [];
      unsentBytes = 0;
      lastWriteMs = performance.now();
      try { body?.enqueue(chunk); } catch { /* the POST ended early (refused, stopped or broken) */ }
    }

    /** Takes a frame for the open request: written now after a pause, else with the next batch. */
    function take(bytes, end) {
      unsent.push(bytes);
      unsentBytes += bytes.length;
      if (end || batchMs === 0) { writeUnsent(); return; }
      if (writeTimer !== null) return;
      const waitMs = lastWriteMs + batchMs - performance.now();
      if (waitMs <= 0) writeUnsent();
      else writeTimer = setTimeout(writeUnsent, waitMs);
    }

    /** One POST: the frames from `from` on (all of them for a restore), then what the producer writes next. */
    async function attempt(lastEventId, restoreTo, from) {
      let controller;
      const bodyStream = new ReadableStream({ start(c) { controller = c; } });
      // what this request resends covers the frames not yet written to the last one
      unsent = [];
      unsentBytes = 0;
      controller.enqueue(OPENING);
      if (sent !== null) {
        for (let i = restoreTo > 0 ? 0 : from; i < sent.length; i++) controller.enqueue(sent[i]);
      }
      if (sawDone) controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      if (sourceEnded) controller.close();
      body = controller;
      const headers = {
        ...auth,
        "content-type": "text/event-stream",
        "x-vercel-ai-ui-message-stream": "v1",
        "x-iqstream-publisher-lease": `${leaseMs}ms`,
      };
      if (lastEventId !== null) headers["last-event-id"] = String(lastEventId);
      if (restoreTo > 0) headers["x-iqstream-restore"] = String(restoreTo);
      try {
        const res = await fetchImpl(target, { method: "POST", body: bodyStream, duplex: "half", headers });
        const text = await res.text();
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        return { status: res.status, text, json };
      } catch (e) {
        return { status: 0, text: e.message, error: e };
      } finally {
        if (body === controller) body = null;
      }
    }

    /** Where does the run stand after a break: { code, info } of GET /v1/runs/{id} (code 0: no answer). */
    async function runStatus() {
      try {
        const res = await fetchImpl(runUrl(streamId), { headers: auth });
        if (res.status !== 200) {
          await res.body?.cancel();
          return { code: res.status, info: null };
        }
        return { code: 200, info: await res.json() };
      } catch {
        return { code: 0, info: null };
      }
    }

    /**
     * Publishes the run, recovering from breaks (docs/DEPLOY.md, "Restore: the protocol"): a break or 5xx asks
     * the run's status and continues with Last-Event-ID; a run no node holds (404, 409 run_lost) is restored
     * with X-IQStream-Restore and the kept frames; never restored on a 503.
     */
    async function publish() {
      let lastEventId = null;
      let restoreTo = 0;
      let from = 0;
      let failures = 0;
      let bestHeld = -1;
      for (;;) {
        const r = await attempt(lastEventId, restoreTo, from);
        if (r.status >= 200 && r.status < 300) return;
        if (r.status === 409 && r.json?.error === "run_stopped") {
          // stopStream from any instance: the producer's source is cancelled, its own stream closed
          stopped = true;
          closeQuietly(local);
          await source.cancel("stopped (IQ-Stream run_stopped)").catch(() => {});
          return;
        }
        if (failed) return;
        const lost = r.status === 409 && r.json?.error === "run_lost";
        const retryable = r.status === 0 || r.status >= 500 || lost
          || (r.status === 409 && r.json?.error === "publisher_active" && failures > 0)
          || (r.status === 409 && r.json?.error === "event_id_mismatch" && failures > 0);
        const what = `POST ${target}: ${r.status === 0 ? r.text : `${r.status} ${r.text}`}`;
        if (!retryable || maxRetries === 0) {
          onError(new Error(what, r.error ? { cause: r.error } : undefined));
          return;
        }
        if (sent === null) {
          onError(new Error(`${what} (not continued: the stream's frames were not kept, past restoreBufferBytes)`,
            r.error ? { cause: r.error } : undefined));
          return;
        }
        // ask, then continue or restore, until it works or maxRetries attempts in a row made no progress
        for (;;) {
          if (++failures > maxRetries) {
            onError(new Error(`${what} (gave up after ${maxRetries} attempts to continue it)`));
            return;
          }
          await sleep(Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** (failures - 1)));
          const s = lost ? { code: 404, info: null } : await runStatus();
          if (s.code === 404) {
            // no node holds the run (its node died): restore it, events 1..N with their ids, then go on
            lastEventId = sentCount > 0 ? 0 : null;
            restoreTo = sentCount;
            break;
          }
          if (s.code !== 200 || s.info.publishing) continue; // 503 / no answer / not seen the break yet: ask again
          const held = s.info.events;
          if (held > sentCount || (s.info.ended && held < sentCount)) {
            onError(new Error(`${what}: the run holds ${held} events${s.info.ended ? " and ended" : ""}, `
              + `this producer sent ${sentCount}`));
            return;
          }
          if (s.info.ended) return; // it has everything: the break came after the end
          if (held > bestHeld) { bestHeld = held; failures = 0; }
          lastEventId = held;
          restoreTo = 0;
          from = held;
          break;
        }
      }
    }
    const post = publish().catch((e) => onError(e)).finally(() => { settled = true; });

    (async () => {
      try {
        for (;;) {
          const { done, value } = await source.read();
          if (done) break;
          const [frames, rest] = splitFrames(pending + value);
          pending = rest;
          try { local.enqueue(value); } catch { /* the producer's own reader left: the stream goes on */ }
          for (const frame of frames) {
            const bytes = encoder.encode(frame);
            let end = false;
            if (frame.startsWith("data: ")) {
              if (frame === "data: [DONE]\n\n") sawDone = end = true;
              else {
                sentCount++;
                if (sent !== null) {
                  sentBytes += bytes.length;
                  if (sentBytes > restoreBufferBytes) sent = null;
                  else sent.push(bytes);
                }
              }
            }
            take(bytes, end);
          }
        }
        if (pending) splitFrames(`${pending}\n\n`, "the stream ended inside a frame");
        sourceEnded = true;
        writeUnsent();
        closeQuietly(local);
        if (body) closeQuietly(body);
      } catch (e) {
        if (writeTimer !== null) { clearTimeout(writeTimer); writeTimer = null; }
        if (!stopped) {
          failed = true;
          try { local.error(e); } catch { /* closed */ }
          try { body?.error(e); } catch { /* closed */ }
        }
      }
      await post;
      finished();
    })();
    // resolve once IQ-Stream holds the run (it is made when the POST's head arrives), so an id saved after this
    // resolves is resumable at once on any instance; a refused POST ends the wait (its error went to onError)
    const deadline = Date.now() + 10_000;
    for (let waitMs = 2; !settled && Date.now() < deadline; waitMs = Math.min(waitMs * 2, 100)) {
      if ((await status(streamId).catch(() => null)) !== null) break;
      await sleep(waitMs);
    }
    return localStream;
  }

  /**
   * The one request of a resume: a read of the run while it runs (`?ifRunning=true`, docs/API.md), so that "in
   * flight", "finished" and "unknown" are told apart by its answer, with no status request first: a stream for a
   * running run, null for a finished one (or its replay with replayFinished), undefined for one IQ-Stream does not
   * hold (never made, or expired). `create`: what a stream IQ-Stream does not hold gets instead (resumableStream).
   */
  async function resume(streamId, skipCharacters, create) {
    const target = `${runUrl(streamId)}/events`;
    const abort = new AbortController();
    const res = await fetchImpl(`${target}?ifRunning=true`, {
      headers: { ...auth, accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (res.ok) return readRun(streamId, skipCharacters, res, abort);
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel();
      return create ? create() : undefined;
    }
    if (res.status === 409) {
      const text = await res.text();
      if (/"error":"run_ended"/.test(text)) {
        // finished: a tail read replays it whole (it ends at its [DONE]; a run freed meanwhile is 404 at once)
        return replayFinished ? readRun(streamId, skipCharacters, null, abort, "?live=false") : null;
      }
      throw Object.assign(new Error(`GET ${target}?ifRunning=true: 409 ${text}`), { status: 409 });
    }
    throw await httpError(res, `GET ${target}?ifRunning=true`);
  }

  /**
   * Reads the run from its first event as the producer's text, skipping `skip` characters of it: from `first` (the
   * response of the resume's request) when given, and after a break with Last-Event-ID, as a browser does.
   */
  function readRun(streamId, skip, first, abort, query = "") {
    const target = `${runUrl(streamId)}/events`;
    let lastId = 0;
    let toSkip = skip ?? 0;
    return new ReadableStream({
      async start(controller) {
        let attempt = 0;
        let res = first;
        for (;;) {
          if (res === null) {
            try {
              res = await fetchImpl(`${target}${query}`, {
                headers: { ...auth, accept: "text/event-stream", ...(lastId ? { "last-event-id": String(lastId) } : {}) },
                signal: abort.signal,
              });
            } catch (e) {
              if (abort.signal.aborted) return;
              if (++attempt > READ_RETRIES) { controller.error(e); return; }
              await sleep(100 * attempt);
              continue;
            }
          }
          const body = res;
          res = null;
          if (body.status === 204) { controller.close(); return; }
          if (!body.ok) { controller.error(await httpError(body, `GET ${target}${query}`)); return; }
          let sawDone = false;
          // the frames of one network read go on as one string (a replay's backlog is one write for the app, as
          // resumable-stream's one pub/sub message), each frame's text exactly as the producer wrote it
          let text = "";
          const parser = createParser({
            onEvent(event) {
              if (event.id) lastId = Number(event.id);
              if (event.data === "[DONE]") sawDone = true;
              let frame = `data: ${event.data}\n\n`;
              if (toSkip > 0) {
                const cut = Math.min(toSkip, frame.length);
                toSkip -= cut;
                frame = frame.slice(cut);
              }
              text += frame;
            },
          });
          try {
            const decoder = new TextDecoder();
            for await (const bytes of body.body) {
              parser.feed(decoder.decode(bytes, { stream: true }));
              if (text) {
                controller.enqueue(text);
                text = "";
              }
            }
          } catch (e) {
            if (abort.signal.aborted) return;
            if (text) controller.enqueue(text); // parsed, so counted in lastId: the retry starts after them
            if (++attempt > READ_RETRIES) { controller.error(e); return; }
            await sleep(100 * attempt);
            continue;
          }
          if (sawDone) { controller.close(); return; }
          // the response ended without [DONE]: cut by the network or a restart; resume after the last id
          if (++attempt > READ_RETRIES) {
            controller.error(new Error(`GET ${target}: the stream ended before [DONE] ${READ_RETRIES} times`));
            return;
          }
          await sleep(100 * attempt);
        }
      },
      cancel() {
        abort.abort();
      },
    });
  }

  return {
    createNewResumableStream: async (streamId, makeStream, _skipCharacters) => {
      runUrl(streamId);
      return createNewResumableStream(streamId, makeStream);
    },
    resumeExistingStream: (streamId, skipCharacters) => resume(streamId, skipCharacters, null),
    resumableStream: (streamId, makeStream, skipCharacters) => resume(streamId, skipCharacters,
      () => createNewResumableStream(streamId, makeStream)),
    hasExistingStream: async (streamId) => {
      const s = await status(streamId);
      if (s === null) return null;
      return s.ended ? DONE_VALUE : true;
    },
    stopStream: async (streamId) => {
      const res = await fetchImpl(`${runUrl(streamId)}?ifRunning=true`, { method: "DELETE", headers: auth });
      const text = await res.text();
      if (res.status === 200) return true;
      if (res.status === 409 || res.status === 404 || res.status === 410) return false;
      throw new Error(`DELETE ${runUrl(streamId)}: ${res.status} ${text}`);
    },
  };
}

/**
 * Splits `text` into its complete frames (each with its blank line) and what follows the last one, checking each
 * against {@link EXACT_FRAME}. Throws a TypeError naming the first frame this package could not replay exactly.
 */
function splitFrames(text, why) {
  const frames = [];
  let start = 0;
  for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n", start)) {
    const frame = text.slice(start, end);
    if (!EXACT_FRAME.test(frame)) {
      const shown = frame.length > 80 ? `${frame.slice(0, 80)}...` : frame;
      throw new TypeError(`@iqstream/resumable-stream: ${why ? `${why}: ` : ""}a frame it cannot replay exactly: `
        + `${JSON.stringify(shown)}: only single-line "data: ..." frames (what the AI SDK writes) come back byte `
        + "for byte; an event:, id: or retry: field, several data: lines or CR line ends would not");
    }
    frames.push(text.slice(start, end + 2));
    start = end + 2;
  }
  return [frames, text.slice(start)];
}

function trimSlash(s) {
  return s.endsWith("/") ? s.slice(0, -1) : s;
}

function closeQuietly(controller) {
  try { controller.close(); } catch { /* already closed or errored */ }
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

async function httpError(res, what) {
  const text = await res.text().catch(() => "");
  const err = new Error(`${what}: ${res.status} ${text}`);
  err.status = res.status;
  return err;
}
