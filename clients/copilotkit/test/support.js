// Test support: CopilotKit runtime instances as Node processes (the docs' example, examples/server.js,
// on loopback), a scripted AG-UI agent (a real AbstractAgent from @ag-ui/client), and an SSE client for
// the runtime's routes.
// The IQ-Stream server, tokens and the cuttable TCP proxy come from the JS client's test support.
import { fork } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { AbstractAgent, EventType } from "@ag-ui/client";
import { Observable, from } from "rxjs";
import { SseParser } from "@iqstream/client";

export { startServer, startProxy, waitFor, latch } from "../../js/test/support.js";

process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
process.env.DO_NOT_TRACK = "1";

/**
 * A CopilotKit runtime instance as its own Node process (test/instance.js: the docs' example,
 * examples/server.js, serving the scripted agent), pointed at IQ-Stream `iqUrl` with `secret`.
 * Resolves once it listens: { url (its /api), pid, hold(threadId, at?), open(threadId), state(),
 * isRunning(threadId), kill() (SIGKILL), close() }. Every request to it fails after `timeoutMs`.
 */
export async function startInstance({ iqUrl, secret, timeoutMs = 20_000 }) {
  const child = fork(fileURLToPath(new URL("./instance.js", import.meta.url)), [], {
    execArgv: ["--preserve-symlinks"],
    env: { ...process.env, IQSTREAM_URL: iqUrl, IQSTREAM_JWT_SECRET: secret },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map();
  let nextId = 0;
  let exited = null;
  const exit = new Promise((resolve) => child.once("exit", (code, signal) => {
    exited = signal ?? code;
    for (const { reject } of pending.values()) reject(new Error(`instance ${child.pid} exited (${exited})`));
    pending.clear();
    resolve(exited);
  }));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${child.pid} did not listen within ${timeoutMs} ms`)), timeoutMs);
    child.once("message", (m) => { clearTimeout(timer); resolve(m.url); });
    exit.then((how) => { clearTimeout(timer); reject(new Error(`instance ${child.pid} exited (${how}) before listening`)); });
  }).catch((err) => { child.kill("SIGKILL"); throw err; });
  child.on("message", ({ id, value, error }) => {
    const call = pending.get(id);
    if (!call) return;
    pending.delete(id);
    clearTimeout(call.timer);
    if (error) call.reject(new Error(error));
    else call.resolve(value);
  });
  const ask = (op, args = {}) => new Promise((resolve, reject) => {
    if (exited !== null) return reject(new Error(`instance ${child.pid} exited (${exited})`));
    const id = nextId++;
    const timer = setTimeout(() => { pending.delete(id); reject(new Error(`instance ${child.pid}: no answer to ${op} in ${timeoutMs} ms`)); }, timeoutMs);
    pending.set(id, { resolve, reject, timer });
    child.send({ id, op, ...args });
  });
  return {
    url,
    pid: child.pid,
    hold: (threadId, at) => ask("hold", { threadId, at }),
    open: (threadId) => ask("open", { threadId }),
    state: () => ask("state"),
    isRunning: (threadId) => ask("isRunning", { threadId }),
    /** SIGKILL, by its pid; resolves once it has exited. */
    async kill() {
      if (exited === null) process.kill(child.pid, "SIGKILL");
      await exit;
    },
    /** Ends it (SIGTERM, then SIGKILL after 5 s), by its pid; resolves once it has exited. */
    async close() {
      if (exited !== null) return;
      process.kill(child.pid, "SIGTERM");
      const timer = setTimeout(() => { if (exited === null) process.kill(child.pid, "SIGKILL"); }, 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** The body CopilotKit's client posts to /agent/:id/run and /agent/:id/connect. */
export function runInput(threadId, runId, text = "hello") {
  return {
    threadId,
    runId,
    messages: text ? [{ id: `u-${runId}`, role: "user", content: text }] : [],
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
  };
}

/**
 * POSTs to a runtime route and reads its SSE answer. `onEvent(event, events)` may return "cut" to
 * destroy the connection there (a browser leaving mid-answer).
 * Resolves { status, events, cut }.
 */
export function postSse(url, body, { onEvent } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "text/event-stream" } });
    const events = [];
    let cut = false;
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        let text = "";
        res.on("data", (c) => { text += c; });
        res.on("end", () => resolve({ status: res.statusCode, events, text }));
        return;
      }
      const parser = new SseParser({
        onMessage: ({ data }) => {
          if (cut || !data) return;
          const event = JSON.parse(data);
          events.push(event);
          if (onEvent?.(event, events) === "cut") {
            cut = true;
            req.destroy();
            resolve({ status: 200, events, cut });
          }
        },
      });
      res.setEncoding("utf8");
      res.on("data", (c) => parser.push(c));
      res.on("end", () => { if (!cut) { parser.end(); resolve({ status: 200, events, cut }); } });
      res.on("error", (e) => { if (!cut) reject(e); });
    });
    req.on("error", (e) => { if (!cut) reject(e); });
    req.end(JSON.stringify(body));
  });
}

/** POSTs JSON to a runtime route; resolves { status, body }. */
export async function postJson(url, body = {}) {
  const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const text = await r.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* text */ }
  return { status: r.status, body: parsed };
}

/**
 * The scripted AG-UI run: text, a tool call with its result, more text, with a pause point.
 * `hold` (a latch) pauses the agent before step `holdAt`.
 */
export function script(threadId, runId) {
  const m1 = `m1-${runId}`;
  const m2 = `m2-${runId}`;
  const tc = `tc-${runId}`;
  const words = ["Looking ", "that ", "up ", "for ", "you."];
  const more = ["The ", "Q3 ", "report ", "is ", "ready."];
  return [
    { type: EventType.RUN_STARTED, threadId, runId },
    { type: EventType.TEXT_MESSAGE_START, messageId: m1, role: "assistant" },
    ...words.map((delta) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: m1, delta })),
    { type: EventType.TEXT_MESSAGE_END, messageId: m1 },
    { type: EventType.TOOL_CALL_START, toolCallId: tc, toolCallName: "search", parentMessageId: m1 },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: tc, delta: "{\"query\":" },
    { type: EventType.TOOL_CALL_ARGS, toolCallId: tc, delta: "\"Q3 report\"}" },
    { type: EventType.TOOL_CALL_END, toolCallId: tc },
    { type: EventType.TOOL_CALL_RESULT, toolCallId: tc, messageId: `r-${runId}`, role: "tool", content: "found: q3.pdf" },
    { type: EventType.TEXT_MESSAGE_START, messageId: m2, role: "assistant" },
    ...more.map((delta) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: m2, delta })),
    { type: EventType.TEXT_MESSAGE_END, messageId: m2 },
    { type: EventType.RUN_FINISHED, threadId, runId },
  ];
}

/** Index in script() of the second message's TEXT_MESSAGE_END: mid-answer, its words sent, the message open. */
export const MID = 19;

/**
 * A real AbstractAgent that plays script() with small pauses; `control` is shared by its clones
 * (the runtime clones the agent per request): `control.holds[threadId]` (a latch) holds the run
 * before step MID (or `control.holdAt`); `control.aborts` counts abortRun() calls that stopped a run,
 * `control.aborted` (when there) lists their thread ids.
 */
export class ScriptedAgent extends AbstractAgent {
  constructor(control = { holds: {}, aborts: 0, runs: 0 }, config = {}) {
    super({ agentId: "assistant", ...config });
    this.control = control;
    this.abortController = new AbortController();
  }

  run(input) {
    const control = this.control;
    const signal = this.abortController.signal;
    const steps = script(input.threadId, input.runId);
    return new Observable((subscriber) => {
      let done = false;
      control.runs++;
      const onAbort = () => {
        if (done) return;
        done = true;
        control.aborts++;
        control.aborted?.push(input.threadId);
        subscriber.complete(); // an aborted run just stops, as HttpAgent's does
      };
      signal.addEventListener("abort", onAbort);
      (async () => {
        for (let i = 0; i < steps.length && !done; i++) {
          if (i === (control.holdAt ?? MID) && control.holds[input.threadId]) {
            await Promise.race([control.holds[input.threadId].wait(), new Promise((r) => signal.addEventListener("abort", r))]);
          } else {
            await new Promise((r) => setTimeout(r, 3));
          }
          if (done) return;
          subscriber.next(steps[i]);
        }
        if (!done) {
          done = true;
          subscriber.complete();
        }
      })().catch((e) => subscriber.error(e));
      return () => signal.removeEventListener("abort", onAbort);
    });
  }

  abortRun() {
    this.abortController.abort();
    super.abortRun();
  }

  clone() {
    return new ScriptedAgent(this.control, { agentId: this.agentId, description: this.description });
  }
}

/** The messages AG-UI's own event application builds from `events` (as CopilotKit's client does). */
export async function messagesOf(events, threadId = "replay") {
  class Replay extends AbstractAgent {
    run() { return from(events); }
  }
  const agent = new Replay({ threadId });
  await agent.runAgent();
  return agent.messages;
}
