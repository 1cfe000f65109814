/**
 * `@iqstream/client/publisher` (Node only: it uses node:http, so it is a subpath of its own and
 * stays out of browser bundles of `@iqstream/client`).
 *
 * Streams one IQ-Stream run from Node: a single chunked `POST /v1/runs/{runId}/events`
 * (NDJSON, one event per line) held open for the run's life, so each event reaches the
 * relay's subscribers the moment it is written.
 *
 * - `open()` sends the request line and headers: the server creates the run (or refuses:
 *   409 publisher_active / run_ended, 503) at once, before any event.
 * - `send(event)` writes one event line; false once the request is finished or refused.
 * - `end()` finishes the body and resolves with the server's answer
 *   (`{ status, body }`, body parsed when JSON).
 * - `answer` resolves when the server answers, which before `end()` means a refusal
 *   (the server answers a publish early only to refuse it); `onAnswer` is told too.
 * - A stop (`DELETE /v1/runs/{runId}` by anyone with the publish right) is its own outcome: the
 *   server answers the open request 409 `run_stopped` at once (with `lastEventId`); `stopped`
 *   turns true and `onAnswer` is told, so the producer can abort its agent. `send` returns false.
 * - `abort()` cuts the connection: the server ends the run with PUBLISHER_LOST after
 *   its --publisher-timeout unless a new request continues it.
 * - A break (connection reset, a node or proxy gone, 5xx) is recovered: the publisher asks the
 *   run's status (`GET /v1/runs/{runId}`), and continues over a new request with
 *   `Last-Event-ID` and the events the server does not hold yet, so nothing is lost or
 *   duplicated; up to `maxRetries` (8) attempts in a row, 200 ms doubling to 2 s apart.
 * - **Restore.** It keeps every event line it sent until the run ends (at most
 *   `restoreBufferBytes`, 8 MiB; a run is typically tens of KiB). When no node holds the run any
 *   more (its node died: status 404, or 409 `run_lost`), it restores it on its new owner: a
 *   request with `X-IQStream-Restore: N` and `Last-Event-ID: 0` that resends events 1..N (the same
 *   ids) and then carries the new ones; readers resuming with `Last-Event-ID` wait for it and get
 *   exactly the rest. `restores` counts them. It assumes it wrote the run from its first event (a
 *   run begun by another publisher is never restored: `restore: false`, or past the cap, a lost
 *   run ends the publish with the server's 409 `run_lost`).
 *
 * Writes are not awaited: Node buffers them; an agent produces far less than a socket takes.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import { withTraceContext } from "./trace-context.js";

const RETRY_INITIAL_MS = 200;
const RETRY_MAX_MS = 2000;

export class RunPublisher {
  /**
   * @param {{ baseUrl: string, runId: string, token?: string, onAnswer?: (a: { status: number, body: any }) => void,
   *           restore?: boolean, restoreBufferBytes?: number, maxRetries?: number }} options
   */
  constructor({ baseUrl, runId, token, onAnswer, restore = true, restoreBufferBytes = 8 << 20, maxRetries = 8 }) {
    if (!Number.isInteger(restoreBufferBytes) || restoreBufferBytes < 0) {
      throw new TypeError(`restoreBufferBytes must be an integer >= 0 (got ${restoreBufferBytes})`);
    }
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new TypeError(`maxRetries must be an integer >= 0 (got ${maxRetries})`);
    }
    this.url = new URL(`/v1/runs/${encodeURIComponent(runId)}/events`, baseUrl);
    this.runUrl = new URL(`/v1/runs/${encodeURIComponent(runId)}`, baseUrl);
    this.runId = runId;
    this.token = token;
    this.onAnswer = onAnswer;
    this.maxRetries = maxRetries;
    this.restoreBufferBytes = restore ? restoreBufferBytes : 0;
    this.finished = false;
    this.answered = false;
    /** True once the server answered that the run was stopped (409 run_stopped). */
    this.stopped = false;
    /** Times the run was restored on a new node after the one holding it was lost. */
    this.restores = 0;
    /** @type {Promise<{ status: number, body: any }>} */
    this.answer = new Promise((resolve) => { this._resolve = resolve; });
    this.req = null;
    /**
     * Every event line sent, from the run's first event, to continue or restore the run; null when not kept
     * (restore off, or past the cap): a break then ends the publish (status 0), as a lost node does (run_lost).
     */
    this._sent = this.restoreBufferBytes > 0 ? [] : null;
    this._sentBytes = 0;
    this._ended = false;
    this._aborted = false;
    this._failures = 0;
  }

  /** Sends the headers; the run exists (or is refused) once the server has read them. */
  open() {
    this._request(null, 0);
    return this;
  }

  /** Opens a request: `lastEventId` null for the first one (no header), `restoreTo` > 0 for a restore. */
  _request(lastEventId, restoreTo) {
    const lib = this.url.protocol === "https:" ? https : http;
    const headers = { "Content-Type": "application/x-ndjson", "Transfer-Encoding": "chunked" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (lastEventId !== null) headers["Last-Event-ID"] = String(lastEventId);
    if (restoreTo > 0) headers["X-IQStream-Restore"] = String(restoreTo);
    withTraceContext(headers);
    const req = lib.request(this.url, { method: "POST", headers, agent: false });
    this.req = req;
    let settled = false;
    const outcome = (status, text) => {
      if (settled) return;
      settled = true;
      this._outcome(req, status, text);
    };
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => { text += c; });
      res.on("end", () => outcome(res.statusCode ?? 0, text));
      res.on("error", () => outcome(0, text));
    });
    req.on("error", (err) => outcome(0, String(err?.message ?? err)));
    req.flushHeaders();
    return req;
  }

  /** How a request ended: the final answer, or a break or 5xx that is recovered. */
  _outcome(req, status, text) {
    if (req !== this.req || this.answered) return;
    let body = text;
    try { body = JSON.parse(text); } catch { /* not JSON */ }
    const lost = status === 409 && body?.error === "run_lost";
    const retryable = !this._aborted && this._sent !== null && this.maxRetries > 0 && (status === 0 || status >= 500 || lost
      || (status === 409 && body?.error === "publisher_active" && this._failures > 0));
    if (!retryable) {
      this._answered(status, body);
      return;
    }
    this._failures++;
    if (this._failures > this.maxRetries) {
      this._answered(status, body);
      return;
    }
    const delay = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** (this._failures - 1));
    setTimeout(() => { this._recover(lost).catch((e) => this._answered(0, String(e?.message ?? e))); }, delay);
  }

  /** Where does the run stand? Then continue it (or restore it) over a new request. */
  async _recover(lost) {
    if (this.answered || this._aborted) return;
    let status = 0;
    let info = null;
    if (!lost) {
      try {
        const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
        const r = await fetch(this.runUrl, { headers });
        status = r.status;
        info = status === 200 ? await r.json() : null;
        if (status !== 200) await r.text();
      } catch {
        status = 0;
      }
    }
    if (this._sent === null) {
      this._answered(0, "the publish broke and its events were not kept (past restoreBufferBytes)");
      return;
    }
    if (lost || status === 404) {
      if (this._sent.length === 0) {
        this._continue(null, 0, 0); // nothing was sent: just start again
        return;
      }
      this.restores++;
      this._continue(0, this._sent.length, 0);
      return;
    }
    if (status !== 200 || info.publishing) {
      // the node could not say (a peer did not answer), or the broken request is still open there: ask again
      this._outcome(this.req, 503, "");
      return;
    }
    const held = info.events;
    if (this._sent === null) return; // answered meanwhile
    if (held > this._sent.length) {
      this._answered(409, { error: "event_id_mismatch", runId: this.runId, lastEventId: held,
        message: `the run holds ${held} events, this publisher sent ${this._sent.length}` });
      return;
    }
    if (info.ended) {
      if (held === this._sent.length) {
        this._answered(200, { runId: this.runId, lastEventId: held, ended: true });
      } else {
        this._answered(409, { error: "run_ended", runId: this.runId, lastEventId: held });
      }
      return;
    }
    if (held > 0 || this._failures > 0) this._failures = held > 0 ? 0 : this._failures;
    this._continue(held, 0, held);
  }

  /** A new request: resends the lines from `from` on, then ends it if end() was called. */
  _continue(lastEventId, restoreTo, from) {
    const req = this._request(lastEventId, restoreTo);
    for (let i = restoreTo > 0 ? 0 : from; i < this._sent.length; i++) req.write(this._sent[i]);
    if (this._ended) req.end();
  }

  _answered(status, body) {
    if (this.answered) return;
    this.answered = true;
    this.finished = true;
    this._sent = null;
    const a = { status, body };
    this.stopped = status === 409 && body?.error === "run_stopped";
    this._resolve(a);
    this.onAnswer?.(a);
  }

  /** Writes one event. @returns {boolean} false when the request is over (ended, refused, cut) */
  send(event) {
    if (this.finished || !this.req) return false;
    const line = `${JSON.stringify(event)}\n`;
    if (this._sent !== null) {
      this._sentBytes += Buffer.byteLength(line);
      if (this._sentBytes > this.restoreBufferBytes) this._sent = null;
      else this._sent.push(line);
    }
    if (this.req.writable) this.req.write(line);
    return true;
  }

  /** Ends the body; resolves with the server's answer. */
  end() {
    if (this.req && !this.finished) {
      this.finished = true;
      this._ended = true;
      this.req.end();
    }
    return this.answer;
  }

  /** Cuts the connection (the run is then lost unless continued). */
  abort() {
    this.finished = true;
    this._aborted = true;
    this.req?.destroy();
  }
}

/**
 * Publishes a list of events as one request and resolves with the answer.
 * @param {{ baseUrl: string, runId: string, token?: string }} options
 * @param {object[]} events
 */
export async function publishEvents({ baseUrl, runId, token }, events) {
  const headers = { "Content-Type": "application/x-ndjson" };
  if (token) headers.Authorization = `Bearer ${token}`;
  withTraceContext(headers);
  const r = await fetch(new URL(`/v1/runs/${encodeURIComponent(runId)}/events`, baseUrl), {
    method: "POST",
    headers,
    body: events.map((e) => JSON.stringify(e)).join("\n") + "\n",
  });
  const text = await r.text();
  let body = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, body };
}
