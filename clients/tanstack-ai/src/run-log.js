/**
 * One IQ-Stream run seen as a TanStack durability log: the HTTP calls `iqstreamStream` makes, and nothing
 * TanStack-specific.
 *
 * Implementation notes
 * - Publishing is a request per batch, continued with `Last-Event-ID` (docs/API.md, "Continuing a run"): each
 *   POST states the last id this publisher holds, so the server appends only if nobody else did
 *   (`409 event_id_mismatch` otherwise) and its answer's `lastEventId` gives the ids of the batch: the offsets
 *   are IQ-Stream's ids, known once IQ-Stream holds the chunks. (bench/append.js measures this against one
 *   streaming POST per run.)
 * - Between batches no request is open, so every POST carries `X-IQStream-Publisher-Lease` and, while the run is
 *   open, an empty continuation POST is sent every third of the lease (for at most `maxPauseMs` after the last
 *   batch): a producer that dies leaves the run without a publisher for a lease, and IQ-Stream ends it with
 *   `RUN_ERROR` `PUBLISHER_LOST`. The timer is unref'd: it never keeps a process alive on its own.
 * - Calls are queued (one at a time, in order), so a keep-alive never races an append.
 * - A POST that fails on the network is retried with the same `Last-Event-ID`; a `409 event_id_mismatch` whose
 *   `lastEventId` falls inside the batch means the server took part of it before the break, and the rest is
 *   sent after that id. Anything else is an {@link IqStreamDurabilityError}.
 * - **Restore.** The log keeps the run's event lines (from id 1, at most `restoreBufferBytes`, 8 MiB; a run is
 *   typically tens of KiB). When no node holds the run any more (its node died behind a cluster: `409 run_lost`)
 *   it restores it: one POST with `X-IQStream-Restore: N` and `Last-Event-ID: 0` whose body is events 1..N again
 *   (the same ids, so the offsets stay valid), the pending batch at its end (docs/DEPLOY.md, "Restore: the
 *   protocol"). A keep-alive that meets `run_lost` restores at once, so readers waiting to resume get the rest.
 * - Confined to the caller's event loop; no state is shared between instances (each request builds its own).
 *
 * @module
 */

import { readRun } from "@iqstream/client/reader";
import { SseParser } from "@iqstream/client/sse";
import { IqStreamDurabilityError } from "./errors.js";
import { withTraceContext } from "./trace-context.js";

const NETWORK_RETRIES_MS = [50, 250, 1000];
const UTF8 = new TextEncoder();

export class RunLog {
  /**
   * @param {{ baseUrl: string, iqRunId: string, token?: string | (() => string | Promise<string>),
   *           leaseMs: number, maxPauseMs: number, fetch: typeof fetch }} options
   */
  constructor({ baseUrl, iqRunId, token, leaseMs, maxPauseMs, fetch, restoreBufferBytes = 8 << 20 }) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.iqRunId = iqRunId;
    this.token = token;
    this.leaseMs = leaseMs;
    this.maxPauseMs = maxPauseMs;
    this.fetch = fetch;
    /** When the last batch was appended (the keep-alive stops maxPauseMs after it). */
    this.lastAppendAt = 0;
    this.runUrl = `${this.baseUrl}/v1/runs/${encodeURIComponent(iqRunId)}`;
    /** The last event id this publisher knows the run holds. */
    this.lastEventId = 0;
    /** True once IQ-Stream said the run ended. */
    this.ended = false;
    this.queue = Promise.resolve();
    this.keepAliveTimer = undefined;
    this.closed = false;
    /** Every event line the run holds, from id 1, to restore it (null: not kept, or past the cap). */
    this.kept = restoreBufferBytes > 0 ? [] : null;
    this.keptBytes = 0;
    this.restoreBufferBytes = restoreBufferBytes;
    /** Times the run was restored after the node holding it was lost. */
    this.restores = 0;
  }

  async headers(extra = {}) {
    const token = typeof this.token === "function" ? await this.token() : this.token;
    // the active OpenTelemetry context (traceparent, baggage) when the API is installed
    return withTraceContext(token ? { Authorization: `Bearer ${token}`, ...extra } : { ...extra });
  }

  /** Runs `task` after every queued one (its failure does not block the next). */
  enqueue(task) {
    const result = this.queue.then(task);
    this.queue = result.catch(() => {});
    return result;
  }

  /**
   * Appends event lines (JSON, one per event) after `lastEventId`; resolves with their ids once IQ-Stream holds
   * them. `expectLastEventId` (default: what this publisher last saw) is the continuation's `Last-Event-ID`.
   * @param {string[]} lines
   * @returns {Promise<number[]>}
   */
  append(lines, expectLastEventId) {
    return this.enqueue(() => this.appendNow(lines, expectLastEventId ?? this.lastEventId));
  }

  /** {@link append} without the queue: for a task already queued. */
  async appendNow(lines, first) {
    // the kept lines hold ids 1..first: a lost run can be restored with them
    const restorable = () => this.kept !== null && this.kept.length === first;
    const from = (held) => (held >= first ? lines.slice(held - first) : this.kept.slice(held).concat(lines));
    let held = first; // the server is known to hold ids 1..held
    let attempt = 0;
    let restoring = false;
    while (true) {
      let answer;
      try {
        answer = restoring
          ? await this.post(this.kept.concat(lines), 0, first + lines.length)
          : await this.post(from(held), held);
      } catch (cause) {
        if (attempt >= NETWORK_RETRIES_MS.length) {
          throw new IqStreamDurabilityError(`publishing to run '${this.iqRunId}' failed: ${cause?.message ?? cause}`, { runId: this.iqRunId, cause });
        }
        await new Promise((r) => setTimeout(r, NETWORK_RETRIES_MS[attempt++]));
        restoring = false;
        continue;
      }
      const { status, body } = answer;
      if (status === 409 && body?.error === "event_id_mismatch" && attempt > 0
          && body.lastEventId <= first + lines.length
          && (body.lastEventId > held || (restorable() && body.lastEventId >= 0))) {
        held = body.lastEventId; // the broken request (or restore) got that far
        if (held === first + lines.length) break;
        continue;
      }
      if (status === 409 && body?.error === "run_lost" && restorable() && !restoring) {
        restoring = true; // no node holds the run any more: resend it from id 1, then the batch
        this.restores++;
        continue;
      }
      if (status !== 200) throw this.refusal("publishing", status, body);
      if (body.lastEventId !== first + lines.length) {
        throw new IqStreamDurabilityError(
          `run '${this.iqRunId}': IQ-Stream holds ${body.lastEventId} events after appending ${lines.length} to ${first}`,
          { status, runId: this.iqRunId, lastEventId: body.lastEventId });
      }
      if (body.ended) this.ended = true;
      break;
    }
    this.keep(lines, first);
    this.lastEventId = first + lines.length;
    this.lastAppendAt = Date.now();
    this.armKeepAlive();
    return lines.map((_, i) => first + i + 1);
  }

  /** Keeps appended lines for a restore (while they continue the kept ones and stay under the cap). */
  keep(lines, first) {
    if (this.kept === null) return;
    if (this.kept.length !== first) {
      this.kept = null; // appended after ids this log does not hold: it cannot restore the run
      return;
    }
    for (const line of lines) this.keptBytes += UTF8.encode(line).length + 1;
    if (this.keptBytes > this.restoreBufferBytes) this.kept = null;
    else this.kept.push(...lines);
  }

  /**
   * One continuation POST of `lines` after `lastEventId` (`restoreTo` > 0: a restore of ids 1..restoreTo):
   * { status, body }; throws on a network failure.
   */
  async post(lines, lastEventId, restoreTo = 0) {
    const headers = await this.headers({
      "Content-Type": "application/x-ndjson",
      "Last-Event-ID": String(lastEventId),
    });
    if (restoreTo > 0) headers["X-IQStream-Restore"] = String(restoreTo);
    if (this.leaseMs > 0) headers["X-IQStream-Publisher-Lease"] = `${this.leaseMs}ms`;
    const response = await this.fetch(`${this.runUrl}/events`, {
      method: "POST",
      headers,
      body: lines.length === 0 ? "" : `${lines.join("\n")}\n`,
    });
    return { status: response.status, body: await readJson(response) };
  }

  /**
   * (Re)starts the keep-alive: an empty continuation every third of the lease while the run is open, for at most
   * maxPauseMs after the last batch (a producer silent for longer, or one TanStack detached without close(), is
   * let go: the lease then ends the run).
   */
  armKeepAlive() {
    clearTimeout(this.keepAliveTimer);
    if (this.leaseMs <= 0 || this.ended || this.closed || this.lastEventId === 0) return;
    if (Date.now() - this.lastAppendAt > this.maxPauseMs) return;
    this.keepAliveTimer = setTimeout(() => {
      this.enqueue(async () => {
        if (this.ended || this.closed) return;
        const { status, body } = await this.post([], this.lastEventId);
        if (status === 409 && body?.error === "run_lost" && this.kept !== null
            && this.kept.length === this.lastEventId) {
          await this.appendNow([], this.lastEventId); // its node died: restore it now, readers are waiting
          return;
        }
        if (status === 200) {
          if (body.ended) this.ended = true;
        } else {
          this.ended = status === 409 || status === 404 || status === 410; // ended, stopped or lost: nothing to keep alive
        }
      }).catch(() => {}).finally(() => this.armKeepAlive());
    }, Math.max(10, Math.floor(this.leaseMs / 3)));
    this.keepAliveTimer.unref?.();
  }

  /**
   * Ends the run if it is still open by appending `terminalLine` (a run that already ended, or never began, is
   * left as it is), and stops the keep-alive.
   */
  async close(terminalLine) {
    this.closed = true;
    clearTimeout(this.keepAliveTimer);
    await this.queue;
    if (this.ended || this.lastEventId === 0) return;
    try {
      await this.append([terminalLine]);
    } catch (err) {
      // ended meanwhile (a stop, PUBLISHER_LOST after a pause past maxPauseMs): nothing to end
      if (err.status === 409 && (err.code === "run_ended" || err.code === "run_stopped" || (await this.status())?.ended !== false)) {
        this.ended = true;
        return;
      }
      throw err;
    }
    this.ended = true;
  }

  /** The run's status ({ lastEventId, ended, ... }), or null when IQ-Stream holds no such run (404, 410). */
  async status() {
    const response = await this.fetch(this.runUrl, { headers: await this.headers() });
    const body = await readJson(response);
    if (response.status === 404 || response.status === 410) return null;
    if (response.status !== 200) throw this.refusal("reading the status of", response.status, body);
    return body;
  }

  /**
   * The run's events after `afterEventId`, as { id, data, event }, until its terminal event (tailing while it
   * is open). Reconnects by itself (`Last-Event-ID`).
   */
  async *events(afterEventId, { signal } = {}) {
    for await (const item of readRun({
      baseUrl: this.baseUrl,
      runId: this.iqRunId,
      token: this.token,
      lastEventId: afterEventId,
      signal,
      headers: withTraceContext({}),
      fetch: this.fetch,
    })) {
      yield item;
    }
  }

  /**
   * The events the run holds now, as [{ id, data, event }]: one tail read (`?live=false`), which ends at the
   * run's last event, open or not, and never waits. [] for a run IQ-Stream does not hold (404, 410).
   */
  async tail() {
    const response = await this.fetch(`${this.runUrl}/events?live=false`, {
      headers: await this.headers({ Accept: "text/event-stream" }),
      cache: "no-store",
    });
    if (response.status === 404 || response.status === 410 || response.status === 204) {
      await response.body?.cancel().catch(() => {});
      return [];
    }
    if (response.status !== 200) throw this.refusal("reading", response.status, await readJson(response));
    const items = [];
    const parser = new SseParser({
      onMessage: ({ id, data }) => items.push({ id: Number(id), data, event: JSON.parse(data) }),
    });
    parser.push(await response.text());
    parser.end();
    items.forEach((item, i) => {
      if (item.id !== i + 1) {
        throw new IqStreamDurabilityError(`run '${this.iqRunId}': event ${item.id} where ${i + 1} was expected`, { runId: this.iqRunId });
      }
    });
    return items;
  }

  refusal(what, status, body) {
    const code = body?.error;
    const message = body?.message ? `: ${body.message}` : "";
    return new IqStreamDurabilityError(
      `IQ-Stream refused ${what} run '${this.iqRunId}' (${status}${code ? ` ${code}` : ""})${message}`,
      { status, code, runId: this.iqRunId, lastEventId: body?.lastEventId });
  }
}

async function readJson(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}
