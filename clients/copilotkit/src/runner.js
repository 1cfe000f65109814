/**
 * IqStreamAgentRunner: a CopilotKit `AgentRunner` whose threads live in IQ-Stream, so that any
 * runtime instance (another process, another machine, a restarted serverless function) can
 * `connect()` to a thread's running answer, ask `isRunning()`, and `stop()` an agent that runs
 * in another instance.
 *
 * How a thread maps onto IQ-Stream's HTTP API (no other store, no server extension):
 * - A thread owns `slots` run ids: `<prefix><thread key>.<slot>` (slot 0..slots-1). Each agent
 *   run of the thread is published to a free slot (one whose id answers 404) as one chunked
 *   NDJSON request held open for the run's life. A slot is free again once its run has passed
 *   `--retention` and `--tombstone` on the server.
 * - The thread's held runs are found by asking `GET /v1/runs/{id}` for every slot at once;
 *   they are ordered by `ageMs` (oldest first). A run not `ended` is the thread's running run.
 * - Stop: the stopping instance publishes a one-event run `<run id>.s.<hash of the AG-UI runId>`.
 *   The instance producing the run waits on that id (`GET .../events`, which the server holds
 *   for --await-run), so it learns of the stop within a round trip, aborts its agent and
 *   publishes the closing events (`finalizeRunEvents` with stopRequested: open messages and
 *   tool calls closed, then RUN_FINISHED), exactly as CopilotKit's InMemoryAgentRunner does.
 * - What `run()` returns is the run as read back from IQ-Stream, so the browser that started
 *   it and every later viewer see the same event sequence.
 *
 * Owning thread: Node's single event loop; no method blocks.
 * When full: with every slot of a thread held, `run()` fails with an error naming the flags
 * that free slots sooner (--retention, --tombstone); nothing is evicted.
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import { AgentRunner, finalizeRunEvents } from "@copilotkit/runtime/v2";
import { EventType, compactEvents } from "@ag-ui/client";
import { ReplaySubject } from "rxjs";
import { readRun, RunGoneError, RunNotFoundError } from "@iqstream/client";
import { RunPublisher, publishEvents } from "./publisher.js";

const TERMINAL = new Set([EventType.RUN_FINISHED, EventType.RUN_ERROR]);
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

export class IqStreamAgentRunner extends AgentRunner {
  /**
   * @param {object} options
   * @param {string} options.baseUrl  IQ-Stream's URL, e.g. "http://iqstream:8080"
   * @param {string | (() => string | Promise<string>)} [options.token]  a server-side token
   *   with publish and subscribe rights on `<prefix>*`, or a function returning a fresh one
   * @param {string} [options.jwtSecret]  instead of `token`: IQ-Stream's HS256 secret; the
   *   runner mints 5-minute tokens for `<prefix>*` itself
   * @param {string} [options.prefix]  run id prefix for CopilotKit threads (default "ck.")
   * @param {number} [options.slots]  runs a thread may hold at once (default 16, at most 64)
   * @param {number} [options.stopWaitMs]  how long stop() waits for the run to end (default 5000)
   */
  constructor(options) {
    super();
    const { baseUrl, token, jwtSecret, prefix = "ck.", slots = 16, stopWaitMs = 5000 } = options ?? {};
    if (!baseUrl) throw new TypeError("IqStreamAgentRunner: baseUrl is required");
    if (!/^[A-Za-z0-9._~:-]{0,16}$/.test(prefix)) throw new TypeError("IqStreamAgentRunner: bad prefix");
    if (!Number.isInteger(slots) || slots < 1 || slots > 64) throw new TypeError("IqStreamAgentRunner: slots must be 1..64");
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.prefix = prefix;
    this.slots = slots;
    this.stopWaitMs = stopWaitMs;
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
      const rights = { publish: [`${this.prefix}*`], subscribe: [`${this.prefix}*`] };
      this._cached = { token: mintToken(this._secret, { iqstream: rights }, 300), refreshAt: now + 240_000 };
    }
    return this._cached.token;
  }

  /** The IQ-Stream run id of a thread's slot. */
  runIdOf(threadId, slot) {
    return `${this.prefix}${threadKey(threadId)}.${slot}`;
  }

  /** The id a stop request for AG-UI run `aguiRunId` is published to. */
  stopIdOf(iqRunId, aguiRunId) {
    const h = createHash("sha256").update(String(aguiRunId), "utf8").digest("base64url").slice(0, 22);
    return `${iqRunId}.s.${h}`;
  }

  /**
   * Every slot's state: `{ held }` (status objects, oldest first) and `{ free }` (slots answering 404).
   * @returns {Promise<{ held: Array<{ slot: number, runId: string, ended: boolean, lastEventId: number, ageMs: number }>, free: number[] }>}
   */
  async threadRuns(threadId) {
    const token = await this.token();
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const answers = await Promise.all(Array.from({ length: this.slots }, async (_, slot) => {
      const runId = this.runIdOf(threadId, slot);
      const r = await fetch(`${this.baseUrl}/v1/runs/${runId}`, { headers });
      const text = await r.text();
      if (r.status === 200) return { slot, status: 200, ...JSON.parse(text), runId };
      if (r.status === 404 || r.status === 410) return { slot, status: r.status, runId };
      throw new Error(`IQ-Stream answered ${r.status} for run ${runId}: ${text}`);
    }));
    const held = answers.filter((a) => a.status === 200).sort((a, b) => b.ageMs - a.ageMs);
    const free = answers.filter((a) => a.status === 404).map((a) => a.slot);
    return { held, free };
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
      const { held, free } = await this.threadRuns(threadId);
      if (held.some((r) => !r.ended)) throw new Error("Thread already running");
      if (free.length === 0) {
        throw new Error(`Thread ${threadId} holds ${this.slots} runs in IQ-Stream (all its slots); `
          + "they free up after the server's --retention and --tombstone: lower those or raise `slots`");
      }
      // the slot after the newest held one, so slots are used round the ring
      const newest = held.length ? held[held.length - 1].slot : -1;
      const slot = [...free].sort((a, b) => ((a - newest - 1 + this.slots) % this.slots)
        - ((b - newest - 1 + this.slots) % this.slots))[0];
      const runId = this.runIdOf(threadId, slot);
      entry = await this._produce({ threadId, agent, input, runId });
    } finally {
      if (this.local.get(threadId) === placeholder) this.local.delete(threadId);
    }
    // the run as IQ-Stream relays it: what every other viewer gets too (unless the server refused
    // our request after all: then the run in that slot is another instance's, not ours)
    try {
      for await (const { event } of this.read(entry.runId, { signal: entry.reading.signal })) subject.next(event);
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
      stopWatch: new AbortController(), reading: new AbortController(),
    };
    const publisher = new RunPublisher({
      baseUrl: this.baseUrl, runId, token,
      onAnswer: ({ status, body }) => {
        if (status !== 200 && !entry.done) {
          // refused (another instance took the slot: 409) or cut: the agent must not run on
          entry.refused = status === 409 && body?.error === "publisher_active"
            ? new Error("Thread already running")
            : new Error(`IQ-Stream refused run ${runId}: ${status} ${JSON.stringify(body)}`);
          entry.reading.abort();
          entry.stopWatch.abort();
          if (entry.finished) {
            try { agent.abortRun(); } catch { /* the agent's own affair */ }
          }
        }
      },
    });
    entry.publisher = publisher;
    publisher.open();
    this.local.set(threadId, entry);
    entry.stop = () => {
      if (entry.stopRequested || entry.done) return false;
      entry.stopRequested = true;
      agent.abortRun();
      return true;
    };
    // the run exists once the server has read the headers: start the agent only then, so a slot
    // another instance took first (409 publisher_active) never starts a second agent
    await this._awaitCreated(runId, publisher);
    if (entry.refused) {
      this.local.delete(threadId);
      throw entry.refused;
    }
    this._watchStop(entry).catch(() => {});
    const events = [];
    const publish = (event) => {
      events.push(event);
      publisher.send(event);
    };
    entry.finished = (async () => {
      try {
        if (!entry.stopRequested) await agent.runAgent(input, {
          onEvent: ({ event }) => {
            if (entry.stopRequested || entry.refused) return;
            let e = event;
            if (e.type === EventType.RUN_STARTED && !e.input) e = { ...e, input };
            publish(e);
          },
        });
        for (const e of finalizeRunEvents([...events], { stopRequested: entry.stopRequested })) publish(e);
      } catch (err) {
        const options = entry.stopRequested
          ? { stopRequested: true }
          : { interruptionMessage: err instanceof Error ? err.message : String(err) };
        for (const e of finalizeRunEvents([...events], options)) publish(e);
      } finally {
        entry.done = true;
        entry.stopWatch.abort();
        await publisher.end();
        if (this.local.get(threadId) === entry) this.local.delete(threadId);
      }
    })();
    return entry;
  }

  async _awaitCreated(runId, publisher) {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !publisher.answered) {
      const token = await this.token();
      const r = await fetch(`${this.baseUrl}/v1/runs/${runId}`, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      const status = r.status === 200 ? await r.json() : (await r.text(), null);
      if (status && status.publishing) return;
      await new Promise((res) => setTimeout(res, 5));
    }
  }

  /** Waits on the run's stop id; a stop published there (or already gone) stops the agent here. */
  async _watchStop(entry) {
    const stopId = this.stopIdOf(entry.runId, entry.aguiRunId);
    const { signal } = entry.stopWatch;
    while (!signal.aborted) {
      try {
        for await (const _ of this.read(stopId, { signal })) { // eslint-disable-line no-unused-vars
          entry.stop();
          return;
        }
        entry.stop(); // the stop run ended without an event: still a stop
        return;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof RunGoneError) { entry.stop(); return; }
        if (err instanceof RunNotFoundError) continue; // no stop within --await-run: ask again
        await new Promise((res) => setTimeout(res, 1000));
      }
    }
  }

  // ------------------------------------------------------------------------------ connect

  connect(request) {
    const subject = new ReplaySubject(Infinity);
    this._connect(request.threadId, subject).catch((err) => subject.error(err));
    return subject.asObservable();
  }

  async _connect(threadId, subject) {
    const { held } = await this.threadRuns(threadId);
    const history = [];
    let live = null;
    for (const run of held) {
      if (!run.ended && !live) { live = run; continue; }
      if (run.ended) history.push(...await this.readAll(run.runId));
    }
    const emitted = new Set();
    for (const event of compactEvents(history)) {
      subject.next(event);
      if (typeof event.messageId === "string") emitted.add(event.messageId);
    }
    if (live) {
      try {
        for await (const { event } of this.read(live.runId)) {
          if (typeof event.messageId === "string" && emitted.has(event.messageId)) continue;
          subject.next(event);
        }
      } catch (err) {
        if (!(err instanceof RunGoneError || err instanceof RunNotFoundError)) throw err;
      }
    }
    subject.complete();
  }

  // ---------------------------------------------------------------------------- isRunning

  async isRunning({ threadId }) {
    if (this.local.get(threadId)?.publisher && !this.local.get(threadId).done) return true;
    const { held } = await this.threadRuns(threadId);
    return held.some((r) => !r.ended);
  }

  // --------------------------------------------------------------------------------- stop

  async stop({ threadId, runId }) {
    const mine = this.local.get(threadId);
    if (mine?.publisher && !mine.done) {
      if (runId !== undefined && runId !== mine.aguiRunId) return false;
      return mine.stop();
    }
    const { held } = await this.threadRuns(threadId);
    const live = held.find((r) => !r.ended);
    if (!live) return false;
    // the AG-UI run id is in the run's RUN_STARTED (its first event)
    const ac = new AbortController();
    let started = null;
    try {
      for await (const { event } of this.read(live.runId, { signal: ac.signal })) {
        started = event;
        break;
      }
    } catch (err) {
      if (!(err instanceof RunGoneError || err instanceof RunNotFoundError)) throw err;
      return false;
    }
    if (!started || started.type !== EventType.RUN_STARTED) return false;
    if (runId !== undefined && runId !== started.runId) return false;
    const stopId = this.stopIdOf(live.runId, started.runId);
    const answer = await publishEvents({ baseUrl: this.baseUrl, runId: stopId, token: await this.token() }, [
      { type: EventType.CUSTOM, name: "iqstream.stop", value: { threadId, runId: started.runId } },
      { type: EventType.RUN_FINISHED, threadId, runId: stopId },
    ]);
    if (answer.status === 409) return false; // a stop was already asked for
    if (answer.status !== 200) throw new Error(`IQ-Stream refused the stop: ${answer.status} ${JSON.stringify(answer.body)}`);
    // wait (bounded) for the producing instance to close the run
    const ac2 = new AbortController();
    const timer = setTimeout(() => ac2.abort(), this.stopWaitMs);
    try {
      await this.readAll(live.runId, { signal: ac2.signal, from: live.lastEventId });
    } catch { /* timed out: the stop is asked for, the run ends when its producer sees it */ }
    clearTimeout(timer);
    return true;
  }
}
