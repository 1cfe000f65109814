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
 *
 * Writes are not awaited: Node buffers them; an agent produces far less than a socket takes.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";

export class RunPublisher {
  /**
   * @param {{ baseUrl: string, runId: string, token?: string, onAnswer?: (a: { status: number, body: any }) => void }} options
   */
  constructor({ baseUrl, runId, token, onAnswer }) {
    this.url = new URL(`/v1/runs/${encodeURIComponent(runId)}/events`, baseUrl);
    this.runId = runId;
    this.token = token;
    this.onAnswer = onAnswer;
    this.finished = false;
    this.answered = false;
    /** True once the server answered that the run was stopped (409 run_stopped). */
    this.stopped = false;
    /** @type {Promise<{ status: number, body: any }>} */
    this.answer = new Promise((resolve) => { this._resolve = resolve; });
    this.req = null;
  }

  /** Sends the headers; the run exists (or is refused) once the server has read them. */
  open() {
    const lib = this.url.protocol === "https:" ? https : http;
    const headers = { "Content-Type": "application/x-ndjson", "Transfer-Encoding": "chunked" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const req = lib.request(this.url, { method: "POST", headers, agent: false });
    this.req = req;
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => { text += c; });
      res.on("end", () => this._answered(res.statusCode ?? 0, text));
      res.on("error", () => this._answered(res.statusCode ?? 0, text));
    });
    req.on("error", (err) => this._answered(0, String(err?.message ?? err)));
    req.flushHeaders();
    return this;
  }

  _answered(status, text) {
    if (this.answered) return;
    this.answered = true;
    this.finished = true;
    let body = text;
    try { body = JSON.parse(text); } catch { /* not JSON */ }
    const a = { status, body };
    this.stopped = status === 409 && body?.error === "run_stopped";
    this._resolve(a);
    this.onAnswer?.(a);
  }

  /** Writes one event. @returns {boolean} false when the request is over (ended, refused, cut) */
  send(event) {
    if (this.finished || !this.req) return false;
    this.req.write(`${JSON.stringify(event)}\n`);
    return true;
  }

  /** Ends the body; resolves with the server's answer. */
  end() {
    if (this.req && !this.finished) {
      this.finished = true;
      this.req.end();
    }
    return this.answer;
  }

  /** Cuts the connection (the run is then lost unless continued). */
  abort() {
    this.finished = true;
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
