/**
 * IqStreamAgentRunner: a CopilotKit `AgentRunner` whose threads live in IQ-Stream, so that any
 * runtime instance (another process, another machine, a restarted serverless function) can
 * `connect()` to a thread's running answer, ask `isRunning()`, and `stop()` an agent that runs
 * in another instance.
 *
 * How a thread maps onto IQ-Stream:
 * - Each agent run of a thread is one IQ-Stream run, `<prefix><thread key>.<n>`, published as one
 *   chunked NDJSON request held open for the run's life. Its first event is the run's RUN_STARTED
 *   (with the run's input), written by the runner before the agent starts; its `threadId` puts the
 *   run in the server's thread index. The agent starts only once that event reads back as the
 *   run's first, so an instance that lost a race for the id never starts one.
 * - The thread's held runs come from `GET /v1/threads/{threadId}/runs` (its pages, oldest first,
 *   each running or ended). `n` is the newest held run's `n` + 1 (0 for a thread with none), so two
 *   instances starting a run on one thread at the same instant pick the same id, and IQ-Stream lets
 *   only one of them publish (the other reads another's RUN_STARTED first: "Thread already running").
 * - Stop: `DELETE /v1/runs/{runId}?ifRunning=true` from whichever instance is asked. The server ends
 *   the run with RUN_ERROR STOPPED and answers the producing instance's open publish 409
 *   run_stopped, so that instance aborts its agent within a round trip. Readers turn the STOPPED
 *   RUN_ERROR into CopilotKit's own closing events (`finalizeRunEvents` with stopRequested: open
 *   messages and tool calls closed, then RUN_FINISHED), as the built-in runner emits on stop.
 * - What `run()` returns is the run as read back from IQ-Stream, so the browser that started
 *   it and every later viewer see the same event sequence.
 *
 * Owning thread: Node's single event loop; no method blocks.
 * When refused: IQ-Stream's refusals (over budget, draining) fail `run()` with the server's answer;
 * nothing is retried behind the caller's back.
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import { AgentRunner, finalizeRunEvents } from "@copilotkit/runtime/v2";
import { EventType, compactEvents } from "@ag-ui/client";
import { ReplaySubject } from "rxjs";
import { readRun, RunGoneError, RunNotFoundError } from "@iqstream/client";
import { RunPublisher } from "./publisher.js";

const SAFE_KEY = /^[A-Za-z0-9_-]{1,48}$/;

/** The part of a run id that names a thread: the id itself when short and plain, else a hash. */
export function threadKey(threadId) {
  if (SAFE_KEY.test(threadId)) return threadId;
  return `h${createHash("sha256").update(threadId, "utf8").digest("base64url").slice(0, 32)}`;
}

/** An HS256 JWT for `claims`, valid for `ttlS` seconds. */
export function mintToken(secret, claims, ttlS = 300) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: "HS256", typ: "JWT" });
  const body = b64({ iat: now, exp: now + ttlS, ...claims });
  const sig = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${sig}`;
}

/** True for IQ-Stream's stop event: the RUN_ERROR a `DELETE` of a running run appends. */
export function isStopEvent(event) {
  return event?.type === EventType.RUN_ERROR && event.code === "STOPPED";
}

/**
 * A run's events as CopilotKit expects them: a STOPPED RUN_ERROR is replaced by CopilotKit's
 * closing events for a stop (`finalizeRunEvents` with stopRequested).
 */
export function closeStopped(events) {
  const out = [];
  for (const event of events) {
    if (isStopEvent(event)) {
      finalizeRunEvents(out, { stopRequested: true });
      break;
    }
    out.push(event);
  }
  return out;
}

export class IqStreamAgentRunner extends AgentRunner {
  /**
   * @param {object} options
   * @param {string} options.baseUrl  IQ-Stream's URL, e.g. "http://iqstream:8080"
   * @param {string | (() => string | Promise<string>)} [options.token]  a server-side token
   *   with publish and subscribe rights on `<prefix>*` and the threads right on the app's thread
   *   ids (e.g. `"threads": ["*"]`), or a function returning a fresh one
   * @param {string} [options.jwtSecret]  instead of `token`: IQ-Stream's HS256 secret; the
   *   runner mints 5-minute tokens for `<prefix>*` (and every thread) itself
   * @param {string} [options.prefix]  run id prefix for CopilotKit threads (default "ck.")
   */
  constructor(options) {
    super();
    const { baseUrl, token, jwtSecret, prefix = "ck." } = options ?? {};
    if (!baseUrl) throw new TypeError("IqStreamAgentRunner: baseUrl is required");
    if (!/^[A-Za-z0-9._~:-]{0,16}$/.test(prefix)) throw new TypeError("IqStreamAgentRunner: bad prefix");
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.prefix = prefix;
    this._tokenOption = token;
    this._secret = jwtSecret;
    this._cached = null;
    /** threadId -> the run this instance is producing */
    this.local = new Map();
  }

  /** A server-side token (fresh when minted). */
  async token() {
    if (typeof this._tokenOption === "function") return this._tokenOption();
    if (typeof this._tokenOption === "string") return this._tokenOption;
    if (!this._secret) return undefined;
    const now = Date.now();
    if (!this._cached || this._cached.refreshAt < now) {
      const rights = { publish: [`${this.prefix}*`], subscribe: [`${this.prefix}*`], threads: ["*"] };
      this._cached = { token: mintToken(this._secret, { iqstream: rights }, 300), refreshAt: now + 240_000 };
    }
    return this._cached.token;
  }

  async _headers() {
    const token = await this.token();
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  /** The IQ-Stream run id of a thread's `n`th run. */
  runIdOf(threadId, n) {
    return `${this.prefix}${threadKey(threadId)}.${n}`;
  }

  /** The `n` of one of this runner's run ids, or null. */
  static nOf(runId) {
    const n = Number(runId.slice(runId.lastIndexOf(".") + 1));
    return Number.isSafeInteger(n) && n >= 0 ? n : null;
  }

  /**
   * The thread's held runs, oldest first (`GET /v1/threads/{threadId}/runs`, every page: the answer is paged
   * by `limit` and its `next` cursor); [] for a thread IQ-Stream holds no run of.
   * @returns {Promise<Array<{ runId: string, running: boolean, events: number, startedAt: number, endedAt: number | null }>>}
   */
  async threadRuns(threadId) {
    const runs = [];
    let after = null;
    do {
      const query = `limit=1000${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const r = await fetch(`${this.baseUrl}/v1/threads/${encodeURIComponent(threadId)}/runs?${query}`, {
        headers: await this._headers(),
      });
      const text = await r.text();
      if (r.status === 404 && after === null) return [];
      if (r.status !== 200) throw new Error(`IQ-Stream answered ${r.status} for thread ${threadId}: ${text}`);
      const page = JSON.parse(text);
      runs.push(...page.runs);
      after = page.next ?? null;
    } while (after);
    return runs;
  }

  /** A run's events (all of them, waiting for the end if it is running); [] when it is gone. */
  async readAll(runId, { signal, from = 0 } = {}) {
    const out = [];
    try {
      for await (const { event } of this.read(runId, { signal, lastEventId: from })) out.push(event);
    } catch (err) {
      if (!(err instanceof RunGoneError || err instanceof RunNotFoundError)) throw err;
    }
    return out;
  }

  /** readRun with this runner's URL and tokens. */
  read(runId, { signal, lastEventId = 0 } = {}) {
    return readRun({ baseUrl: this.baseUrl, runId, token: () => this.token(), signal, lastEventId });
  }

  /** Reads a run to its end into `subject`, a STOPPED end turned into CopilotKit's closing events. */
  async _follow(runId, subject, { signal, skip } = {}) {
    const seen = [];
    for await (const { event } of this.read(runId, { signal })) {
      if (isStopEvent(event)) {
        for (const e of finalizeRunEvents(seen, { stopRequested: true })) subject.next(e);
        return;
      }
      seen.push(event);
      if (!skip?.(event)) subject.next(event);
    }
  }

  // ---------------------------------------------------------------------------------- run

  run(request) {
    const { threadId, agent, input } = request;
    const subject = new ReplaySubject(Infinity);
    this._run(threadId, agent, input, subject).catch((err) => subject.error(err));
    return subject.asObservable();
  }

  async _run(threadId, agent, input, subject) {
    if (this.local.has(threadId)) throw new Error("Thread already running");
    const placeholder = { threadId };
    this.local.set(threadId, placeholder); // refuses a second run here while we look
    let entry;
    try {
      const held = await this.threadRuns(threadId);
      if (held.some((r) => r.running)) throw new Error("Thread already running");
      const newest = held.length ? IqStreamAgentRunner.nOf(held[held.length - 1].runId) : null;
      // the next id after the newest held run: instances racing on the thread pick the same one
      const n = held.length ? (newest ?? Date.now()) + 1 : 0;
      try {
        entry = await this._produce({ threadId, agent, input, runId: this.runIdOf(threadId, n) });
      } catch (err) {
        // the id belonged to a run of this thread that has expired (tombstoned): take a fresh one
        if (err.code !== "run_ended") throw err;
        entry = await this._produce({ threadId, agent, input, runId: this.runIdOf(threadId, Date.now()) });
      }
    } finally {
      if (this.local.get(threadId) === placeholder) this.local.delete(threadId);
    }
    // the run as IQ-Stream relays it: what every other viewer gets too (unless the server refused
    // our request after all: then the run in that id is another instance's, not ours)
    try {
      await this._follow(entry.runId, subject, { signal: entry.reading.signal });
      if (entry.refused) subject.error(entry.refused);
      else subject.complete();
    } catch (err) {
      subject.error(entry.refused ?? err);
    }
  }

  /** Opens the publish request and starts the agent; resolves once the run exists. */
  async _produce({ threadId, agent, input, runId }) {
    const token = await this.token();
    const entry = {
      threadId, runId, agent, aguiRunId: input.runId, stopRequested: false, refused: null,
      reading: new AbortController(),
    };
    const publisher = new RunPublisher({
      baseUrl: this.baseUrl, runId, token,
      onAnswer: ({ status, body }) => {
        if (status === 200 || entry.done) return;
        if (publisher.stopped) {
          // stopped through IQ-Stream (by this instance or another): abort the agent now
          entry.stop();
          return;
        }
        // refused (another instance took the id: 409 publisher_active) or cut: the agent must not run on
        entry.refused = status === 409 && body?.error === "publisher_active"
          ? new Error("Thread already running")
          : Object.assign(new Error(`IQ-Stream refused run ${runId}: ${status} ${JSON.stringify(body)}`),
            { code: body?.error });
        entry.reading.abort();
        if (entry.finished) {
          try { agent.abortRun(); } catch { /* the agent's own affair */ }
        }
      },
    });
    entry.publisher = publisher;
    entry.stop = () => {
      if (entry.stopRequested || entry.done) return false;
      entry.stopRequested = true;
      try { agent.abortRun(); } catch { /* the agent's own affair */ }
      return true;
    };
    publisher.open();
    this.local.set(threadId, entry);
    // the run's first event is written here, before the agent starts: the RUN_STARTED the agent will
    // emit (its own is then left out). Reading it back says whether this request owns the run id.
    const started = { type: EventType.RUN_STARTED, threadId, runId: input.runId, input };
    publisher.send(started);
    const claim = await this._claim(runId, publisher, started);
    if (claim !== "owned") {
      entry.done = true;
      publisher.abort();
      if (this.local.get(threadId) === entry) this.local.delete(threadId);
      if (claim === "taken") throw new Error("Thread already running");
      throw Object.assign(new Error(`IQ-Stream run ${runId} has ended before`), { code: "run_ended" });
    }
    const events = [started];
    const publish = (event) => {
      events.push(event);
      publisher.send(event);
    };
    let agentStarted = false;
    entry.finished = (async () => {
      try {
        if (!entry.stopRequested) await agent.runAgent(input, {
          onEvent: ({ event }) => {
            if (entry.stopRequested || entry.refused) return;
            if (event.type === EventType.RUN_STARTED && !agentStarted) {
              agentStarted = true; // already published, with the input
              return;
            }
            publish(event);
          },
        });
        if (!entry.stopRequested) for (const e of finalizeRunEvents([...events])) publish(e);
      } catch (err) {
        if (!entry.stopRequested) {
          const message = err instanceof Error ? err.message : String(err);
          for (const e of finalizeRunEvents([...events], { interruptionMessage: message })) publish(e);
        }
      } finally {
        entry.done = true;
        await publisher.end();
        if (this.local.get(threadId) === entry) this.local.delete(threadId);
      }
    })();
    return entry;
  }

  /**
   * Whether the publish just opened owns `runId`, before any agent starts: "owned" when the run's first
   * event is `started` (the RUN_STARTED this request wrote), "taken" when it is another's (an instance
   * that opened the same id first: the server refused this request 409 publisher_active), "ended" when
   * the id is an ended run's (409 run_ended, or 410 gone). Reading the run back settles a race that a
   * status poll cannot (it shows the other instance publishing) and that the refusal alone may not
   * (a refused request cut while it writes reports a reset, not the 409). Throws other refusals.
   */
  async _claim(runId, publisher, started) {
    const reading = new AbortController();
    let answer = null;
    publisher.answer.then((a) => {
      answer = a;
      if (a.status !== 0) reading.abort(); // a refusal: the run may never exist (status 0 may hide a 409)
    });
    let first = null;
    try {
      for await (const { event } of this.read(runId, { signal: reading.signal })) {
        first = event;
        break;
      }
    } catch (err) {
      if (err instanceof RunGoneError) return "ended";
      if (!reading.signal.aborted && !(err instanceof RunNotFoundError)) throw err;
    } finally {
      reading.abort();
    }
    if (first && first.type === EventType.RUN_STARTED && first.runId === started.runId
        && first.threadId === started.threadId) {
      return "owned";
    }
    const bound = new Promise((resolve) => { setTimeout(() => resolve({ status: 0, body: "no answer" }), 5000).unref(); });
    const a = answer ?? await Promise.race([publisher.answer, bound]);
    if (a.status === 409 && a.body?.error === "run_ended") return "ended";
    if (first || (a.status === 409 && a.body?.error === "publisher_active")) return "taken";
    throw Object.assign(new Error(`IQ-Stream refused run ${runId}: ${a.status} ${JSON.stringify(a.body)}`),
      { code: a.body?.error });
  }

  // ------------------------------------------------------------------------------ connect

  connect(request) {
    const subject = new ReplaySubject(Infinity);
    this._connect(request.threadId, subject).catch((err) => subject.error(err));
    return subject.asObservable();
  }

  async _connect(threadId, subject) {
    const held = await this.threadRuns(threadId);
    const history = [];
    let live = null;
    for (const run of held) {
      if (run.running && !live) { live = run; continue; }
      if (!run.running) history.push(...closeStopped(await this.readAll(run.runId)));
    }
    const emitted = new Set();
    for (const event of compactEvents(history)) {
      subject.next(event);
      if (typeof event.messageId === "string") emitted.add(event.messageId);
    }
    if (live) {
      try {
        await this._follow(live.runId, subject, {
          skip: (event) => typeof event.messageId === "string" && emitted.has(event.messageId),
        });
      } catch (err) {
        if (!(err instanceof RunGoneError || err instanceof RunNotFoundError)) throw err;
      }
    }
    subject.complete();
  }

  // ---------------------------------------------------------------------------- isRunning

  async isRunning({ threadId }) {
    const mine = this.local.get(threadId);
    if (mine?.publisher && !mine.done) return true;
    return (await this.threadRuns(threadId)).some((r) => r.running);
  }

  // --------------------------------------------------------------------------------- stop

  /**
   * Stops the thread's running run wherever its agent runs: `DELETE ...?ifRunning=true`. The
   * producing instance learns from its publish's 409 run_stopped and aborts its agent; every
   * reader gets the closing events. False when nothing (or not `runId`) is running.
   */
  async stop({ threadId, runId }) {
    let iqRunId;
    let aguiRunId;
    const mine = this.local.get(threadId);
    if (mine?.publisher && !mine.done) {
      iqRunId = mine.runId;
      aguiRunId = mine.aguiRunId;
    } else {
      const live = (await this.threadRuns(threadId)).find((r) => r.running);
      if (!live) return false;
      iqRunId = live.runId;
      if (runId !== undefined) {
        // the AG-UI run id is in the run's RUN_STARTED (its first event)
        const ac = new AbortController();
        try {
          for await (const { event } of this.read(iqRunId, { signal: ac.signal })) {
            if (event.type === EventType.RUN_STARTED) aguiRunId = event.runId;
            break;
          }
        } catch (err) {
          if (!(err instanceof RunGoneError || err instanceof RunNotFoundError)) throw err;
          return false;
        } finally {
          ac.abort();
        }
      }
    }
    if (runId !== undefined && runId !== aguiRunId) return false;
    const r = await fetch(`${this.baseUrl}/v1/runs/${iqRunId}?ifRunning=true`, {
      method: "DELETE", headers: await this._headers(),
    });
    const text = await r.text();
    if (r.status === 200) return true;
    if (r.status === 409 || r.status === 404 || r.status === 410) return false; // it had ended already
    throw new Error(`IQ-Stream refused the stop: ${r.status} ${text}`);
  }
}
