/**
 * An AG-UI agent whose runs are read from IQ-Stream: drop-in for `HttpAgent` in an AG-UI or
 * CopilotKit front end, with runs that survive dropped connections and page reloads.
 *
 * How a run is found
 * - `run(input)` (AG-UI's `runAgent()`): if `startRun` is configured, it is called with the
 *   AG-UI input; your backend starts the agent, has it publish to IQ-Stream, and answers
 *   `{ runId, token }`. Otherwise the configured `runId` is read.
 * - `connect(input)` (AG-UI's `connectAgent()`, which CopilotKit calls when a chat mounts):
 *   if the storage holds an unfinished run for this thread (a reload in mid-answer), that run
 *   is read again; otherwise nothing happens.
 *
 * What AG-UI sees
 * - Each run()/connect() hands AG-UI the run's events exactly as the backend published them,
 *   from its RUN_STARTED to its terminal event: no gap, no duplicate, no second RUN_STARTED,
 *   however often the connection drops in between (see readRun: reconnects carry
 *   Last-Event-ID). After a reload the page has lost its AG-UI messages, and AG-UI's
 *   verifier requires a stream to begin with RUN_STARTED, so a reattach reads the run from
 *   event 1 out of the relay's memory (one request, no model cost) and the answer is rebuilt
 *   exactly; `resumedFromEventId` tells the app how far the page had got before the reload.
 * - Errors: 401/403/404/410 end the run with UnauthorizedError / ForbiddenError /
 *   RunNotFoundError / RunGoneError (runAgent() rejects with it); they are never retried.
 *
 * Storage: after each event `{ runId, lastEventId, token, threadId }` is written under
 * `storageKey` (localStorage in browsers, memory in Node, `null` to disable); the entry is
 * removed when the run ends, or when the relay says it is gone.
 *
 * @module
 */

import { AbstractAgent } from "@ag-ui/client";
import { EMPTY, Observable } from "rxjs";
import { readRun, TERMINAL_EVENT_TYPES } from "./reader.js";
import { RunGoneError, RunNotFoundError } from "./errors.js";
import { clearRun, defaultStorage, loadRun, saveRun } from "./storage.js";

/**
 * @typedef {import("./storage.js").RunStore} RunStore
 * @typedef {import("./storage.js").StoredRun} StoredRun
 * @typedef {import("./reader.js").TokenSource} TokenSource
 */

/**
 * @typedef {object} StartedRun
 * @property {string} runId     the IQ-Stream run id the backend publishes to
 * @property {string} [token]   a subscribe token for that run only
 */

export class IqStreamAgent extends AbstractAgent {
  /**
   * @param {object} config  AG-UI's AgentConfig (agentId, threadId, initialMessages, ...) plus:
   * @param {string} config.baseUrl  IQ-Stream base URL
   * @param {string} [config.runId]  a run to read (when there is no startRun)
   * @param {string} [config.token]  its subscribe token
   * @param {(runId: string) => string|Promise<string>} [config.getToken]  asked for a fresh
   *   subscribe token before each connection (wins over stored tokens)
   * @param {(input: import("@ag-ui/client").RunAgentInput, ctx: { signal: AbortSignal }) => Promise<StartedRun>} [config.startRun]
   *   asks your backend to start a run for this AG-UI input
   * @param {RunStore|null} [config.storage]  default: localStorage in browsers, else memory
   * @param {string | ((agent: IqStreamAgent) => string)} [config.storageKey]
   *   default `iqstream:run:<threadId>`
   * @param {"headers"|"query"} [config.transport]  see readRun
   * @param {typeof fetch} [config.fetch]
   * @param {number} [config.maxAttempts]
   * @param {number} [config.maxDelayMs]
   * @param {(info: { attempt: number, lastEventId: number }) => void} [config.onConnect]
   * @param {(info: { error: unknown, attempt: number, delayMs: number, lastEventId: number }) => void} [config.onReconnect]
   * @param {any} [config.agentId] @param {any} [config.threadId] @param {any} [config.description]
   * @param {any} [config.initialMessages] @param {any} [config.initialState] @param {any} [config.debug]
   */
  constructor(config) {
    super(config);
    if (!config || typeof config.baseUrl !== "string") {
      throw new TypeError("IqStreamAgent: baseUrl is required");
    }
    this.baseUrl = config.baseUrl;
    /** @type {string|undefined} */
    this.runId = config.runId;
    /** @type {string|undefined} */
    this.token = config.token;
    this.getToken = config.getToken;
    this.startRun = config.startRun;
    /** @type {RunStore|null} */
    this.storage = config.storage === undefined ? defaultStorage() : config.storage;
    this.storageKeyOption = config.storageKey;
    this.transport = config.transport ?? "headers";
    this.fetchFn = config.fetch;
    this.maxAttempts = config.maxAttempts;
    this.maxDelayMs = config.maxDelayMs;
    this.onConnect = config.onConnect;
    this.onReconnect = config.onReconnect;
    this.abortController = new AbortController();
    /** The IQ-Stream run being (or last) read. @type {string|undefined} */
    this.currentRunId = undefined;
    /** Id of the last event handed to AG-UI in the current run (0: none). */
    this.lastEventId = 0;
    /** After a reattach: the last event id the page had stored before the reload. @type {number|undefined} */
    this.resumedFromEventId = undefined;
  }

  /** The storage key for this agent's thread. */
  get storageKey() {
    const option = this.storageKeyOption;
    if (typeof option === "function") return option(this);
    return option ?? `iqstream:run:${this.threadId}`;
  }

  /**
   * The unfinished run stored for this thread, if any (what connect() would reattach to).
   * @returns {StoredRun|null}
   */
  storedRun() {
    return loadRun(this.storage, this.storageKey);
  }

  /**
   * @param {any} [parameters]  AG-UI RunAgentParameters, plus an optional abortController
   * @param {any} [subscriber]
   */
  runAgent(parameters, subscriber) {
    this.abortController = parameters?.abortController ?? new AbortController();
    return super.runAgent(parameters, subscriber);
  }

  /**
   * @param {any} [parameters]
   * @param {any} [subscriber]
   */
  connectAgent(parameters, subscriber) {
    this.abortController = parameters?.abortController ?? new AbortController();
    return super.connectAgent(parameters, subscriber);
  }

  /** Stops reading the current run (the run itself goes on at the relay). */
  abortRun() {
    this.abortController.abort();
    super.abortRun();
  }

  /**
   * @param {import("@ag-ui/client").RunAgentInput} input
   * @returns {Observable<import("@ag-ui/client").BaseEvent>}
   */
  run(input) {
    return this.stream(async (signal) => {
      if (this.startRun) {
        const started = await this.startRun(input, { signal });
        if (!started || typeof started.runId !== "string") {
          throw new TypeError("IqStreamAgent: startRun must resolve to { runId, token? }");
        }
        return { runId: started.runId, token: started.token, resumedFrom: undefined };
      }
      if (this.runId) {
        const stored = this.storedRun();
        const resumedFrom = stored?.runId === this.runId ? stored.lastEventId : undefined;
        return { runId: this.runId, token: this.token ?? stored?.token, resumedFrom };
      }
      throw new TypeError("IqStreamAgent: configure startRun or runId");
    }, input);
  }

  /**
   * Reattaches to the run stored for this thread (a reload in mid-answer); nothing to do
   * when there is none.
   * @param {import("@ag-ui/client").RunAgentInput} input
   * @returns {Observable<import("@ag-ui/client").BaseEvent>}
   */
  connect(input) {
    const stored = this.storedRun();
    if (!stored) return EMPTY;
    return this.stream(
      async () => ({ runId: stored.runId, token: stored.token, resumedFrom: stored.lastEventId }),
      input,
    );
  }

  /**
   * @param {(signal: AbortSignal) => Promise<{ runId: string, token?: string, resumedFrom?: number }>} resolveRun
   * @param {import("@ag-ui/client").RunAgentInput} input
   * @returns {Observable<any>}
   */
  stream(resolveRun, input) {
    return new Observable((subscriber) => {
      const controller = new AbortController();
      const outer = this.abortController.signal;
      const onAbort = () => controller.abort(outer.reason);
      if (outer.aborted) controller.abort(outer.reason);
      else outer.addEventListener("abort", onAbort, { once: true });

      (async () => {
        let runId;
        const key = this.storageKey;
        try {
          const target = await resolveRun(controller.signal);
          runId = target.runId;
          this.currentRunId = runId;
          this.lastEventId = 0;
          this.resumedFromEventId = target.resumedFrom;
          const startedToken = target.token;
          const token = this.getToken
            ? () => this.getToken(runId)
            : startedToken ?? this.token;
          const tokenForStorage = typeof token === "string" ? token : undefined;
          saveRun(this.storage, key, { runId, lastEventId: target.resumedFrom ?? 0, token: tokenForStorage, threadId: input?.threadId });

          for await (const { id, event } of readRun({
            baseUrl: this.baseUrl,
            runId,
            token,
            transport: this.transport,
            fetch: this.fetchFn,
            signal: controller.signal,
            maxAttempts: this.maxAttempts,
            maxDelayMs: this.maxDelayMs,
            onConnect: this.onConnect,
            onReconnect: this.onReconnect,
          })) {
            this.lastEventId = id;
            const terminal = TERMINAL_EVENT_TYPES.includes(event.type);
            if (terminal) {
              clearRun(this.storage, key);
            } else {
              // while a reattach replays events the page had already shown, keep its high-water mark
              const lastEventId = Math.max(id, target.resumedFrom ?? 0);
              saveRun(this.storage, key, { runId, lastEventId, token: tokenForStorage, threadId: input?.threadId });
            }
            subscriber.next(event);
          }
          if (!controller.signal.aborted) clearRun(this.storage, key);
          subscriber.complete();
        } catch (error) {
          if (error instanceof RunGoneError || error instanceof RunNotFoundError) clearRun(this.storage, key);
          if (controller.signal.aborted) subscriber.complete();
          else subscriber.error(error);
        } finally {
          outer.removeEventListener("abort", onAbort);
        }
      })();

      return () => controller.abort();
    });
  }

  clone() {
    const cloned = /** @type {IqStreamAgent} */ (super.clone());
    for (const field of [
      "baseUrl", "runId", "token", "getToken", "startRun", "storage", "storageKeyOption",
      "transport", "fetchFn", "maxAttempts", "maxDelayMs", "onConnect", "onReconnect",
    ]) {
      /** @type {any} */ (cloned)[field] = /** @type {any} */ (this)[field];
    }
    cloned.abortController = new AbortController();
    cloned.currentRunId = undefined;
    cloned.lastEventId = 0;
    cloned.resumedFromEventId = undefined;
    return cloned;
  }
}
