// IqStreamAgentRunner with CopilotKit's own runtime (@copilotkit/runtime/v2) and a real IQ-Stream
// server: two runtime instances (two CopilotRuntime objects, two http servers) share one IQ-Stream.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { EventType } from "@ag-ui/client";
import { IqStreamAgentRunner, RunPublisher } from "../src/index.js";
import {
  MID, ScriptedAgent, latch, messagesOf, postJson, postSse, runInput, script, startProxy, startRuntime,
  startServer, waitFor,
} from "./support.js";

let iq;
let proxy;
let control;
let a;
let b;
let bViaProxy;
let runnerA;
let runnerB;

before(async () => {
  iq = await startServer(["--publisher-timeout", "1s", "--await-run", "2s"]);
  proxy = await startProxy(iq.port);
  control = { holds: {}, aborts: 0, runs: 0 };
  runnerA = new IqStreamAgentRunner({ baseUrl: iq.baseUrl, jwtSecret: iq.secret });
  runnerB = new IqStreamAgentRunner({ baseUrl: iq.baseUrl, jwtSecret: iq.secret });
  a = await startRuntime({ agents: { assistant: new ScriptedAgent(control) }, runner: runnerA });
  b = await startRuntime({ agents: { assistant: new ScriptedAgent(control) }, runner: runnerB });
  // a third instance whose runner reaches IQ-Stream through a TCP proxy the test can cut
  bViaProxy = await startRuntime({
    agents: { assistant: new ScriptedAgent(control) },
    runner: new IqStreamAgentRunner({ baseUrl: proxy.baseUrl, jwtSecret: iq.secret }),
  });
});

after(async () => {
  for (const hold of Object.values(control?.holds ?? {})) hold.open(); // no agent left waiting
  await a?.close();
  await b?.close();
  await bViaProxy?.close();
  await proxy?.close();
  await iq?.stop();
});

const types = (events) => events.map((e) => e.type);
const strip = (events) => events.map(({ timestamp, rawEvent, ...rest }) => rest); // eslint-disable-line no-unused-vars

describe("IqStreamAgentRunner in CopilotRuntime", () => {
  test("a run through the runtime streams the agent's events via IQ-Stream", async () => {
    const threadId = "thread-plain";
    const res = await postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-plain"));
    assert.equal(res.status, 200);
    const expected = script(threadId, "run-plain");
    assert.deepEqual(types(res.events), types(expected));
    // the run is in IQ-Stream, event for event
    const held = await runnerB.threadRuns(threadId);
    assert.deepEqual(held.map((r) => [r.runId, r.running]), [[runnerB.runIdOf(threadId, 0), false]]);
    assert.equal(held[0].events, res.events.length);
    const stored = await runnerB.readAll(held[0].runId);
    assert.deepEqual(strip(stored), strip(res.events));
    assert.equal(stored[0].input.threadId, threadId, "RUN_STARTED carries the run's input, as the built-in runner's does");
    assert.equal(await runnerB.isRunning({ threadId }), false);
  });

  test("connect on a second instance mid-run gets the whole run, then follows it to the end", async () => {
    const threadId = "thread-connect";
    const hold = latch();
    control.holds[threadId] = hold;
    // the browser leaves instance A mid-answer (after a few words of the first message)
    const cutRun = await postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-c"), {
      onEvent: (e, all) => (all.length === 4 ? "cut" : undefined),
    });
    assert.equal(cutRun.cut, true);
    assert.equal(await runnerB.isRunning({ threadId }), true, "B sees A's run running");
    let connectStarted = false;
    const connected = postSse(`${b.url}/agent/assistant/connect`, runInput(threadId, "connect-1", null), {
      onEvent: (_, all) => { connectStarted = all.length >= MID; },
    });
    await waitFor(() => connectStarted, 10_000, "connect to deliver the run so far");
    hold.open();
    const res = await connected;
    assert.equal(res.status, 200);
    const uncut = await postSse(`${a.url}/agent/assistant/run`, runInput("thread-uncut", "run-c"));
    // the same run: every event once, in order; the messages AG-UI builds equal an uncut run's
    assert.deepEqual(strip(res.events).map(({ input, threadId: t, ...e }) => e), // eslint-disable-line no-unused-vars
      strip(uncut.events).map(({ input, threadId: t, ...e }) => e)); // eslint-disable-line no-unused-vars
    assert.deepEqual(await messagesOf(res.events), await messagesOf(uncut.events));
    await waitFor(async () => !(await runnerA.isRunning({ threadId })), 5000, "isRunning false after the end");
    assert.equal(await runnerB.isRunning({ threadId }), false);
    delete control.holds[threadId];
  });

  test("connect on an unknown thread completes empty; on a finished thread replays it compacted", async () => {
    const empty = await postSse(`${b.url}/agent/assistant/connect`, runInput("thread-never", "c-0", null));
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.events, []);
    const replay = await postSse(`${b.url}/agent/assistant/connect`, runInput("thread-plain", "c-1", null));
    const original = script("thread-plain", "run-plain");
    assert.ok(replay.events.length < original.length, "text deltas are compacted");
    assert.deepEqual(await messagesOf(replay.events), await messagesOf(original.map((e, i) => (i === 0
      ? { ...e, input: runInput("thread-plain", "run-plain") } : e))));
  });

  test("a second run on a running thread is refused, from any instance", async () => {
    const threadId = "thread-busy";
    const hold = latch();
    control.holds[threadId] = hold;
    const runs0 = control.runs;
    const first = postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-1"));
    await waitFor(() => runnerB.isRunning({ threadId }), 15_000, "first run running");
    await waitFor(() => control.runs === runs0 + 1, 5000, "the first agent run to start");
    const runsBefore = control.runs;
    // through the runtime: an empty stream, as with the built-in runner (whose run() throws)
    const second = await postSse(`${b.url}/agent/assistant/run`, runInput(threadId, "run-2", "again"));
    assert.deepEqual(second.events, []);
    // and the runner's observable fails with the built-in runner's message
    const refused = await new Promise((resolve) => {
      runnerB.run({ threadId, agent: new ScriptedAgent(control), input: runInput(threadId, "run-2b") })
        .subscribe({ next: () => resolve(null), error: resolve, complete: () => resolve(null) });
    });
    assert.match(String(refused?.message), /Thread already running/);
    assert.equal(control.runs, runsBefore, "no second agent run started");
    hold.open();
    const res = await first;
    assert.equal(res.events.at(-1).type, EventType.RUN_FINISHED);
    // and the thread takes a next run once the first ended: the index lists both, in order
    const third = await postSse(`${b.url}/agent/assistant/run`, runInput(threadId, "run-3", "next"));
    assert.equal(third.events.at(-1).type, EventType.RUN_FINISHED);
    const held = await runnerA.threadRuns(threadId);
    assert.deepEqual(held.map((r) => [r.runId, r.running]),
      [[runnerA.runIdOf(threadId, 0), false], [runnerA.runIdOf(threadId, 1), false]]);
    assert.ok(held[0].endedAt <= held[1].startedAt, "oldest first");
    delete control.holds[threadId];
  });

  test("two instances starting a run on the same new thread at once: one runs, the other is refused", async () => {
    const threadId = "thread-race";
    const outcome = (runner, runId) => new Promise((resolve) => {
      const events = [];
      runner.run({ threadId, agent: new ScriptedAgent(control, { threadId }), input: runInput(threadId, runId) }).subscribe({
        next: (e) => events.push(e),
        error: (err) => resolve({ error: err.message, events }),
        complete: () => resolve({ events }),
      });
    });
    const hold = latch(); // the winner stays running until the loser has its answer
    control.holds[threadId] = hold;
    const racing = [outcome(runnerA, "race-a"), outcome(runnerB, "race-b")];
    const firstDone = await Promise.race(racing);
    assert.match(firstDone.error ?? "", /Thread already running/, JSON.stringify(firstDone));
    hold.open();
    const results = await Promise.all(racing);
    delete control.holds[threadId];
    const finished = results.filter((r) => r.events.at(-1)?.type === EventType.RUN_FINISHED && !r.error);
    const refused = results.filter((r) => /Thread already running/.test(r.error ?? ""));
    assert.equal(finished.length, 1, JSON.stringify(results.map((r) => r.error ?? r.events.length)));
    assert.equal(refused.length, 1);
    const held = await runnerA.threadRuns(threadId);
    assert.equal(held.length, 1, "one run in IQ-Stream");
  });

  test("stop on instance B stops the agent running in instance A; every viewer gets the closing events", async () => {
    const threadId = "thread-stop";
    const hold = latch(); // never opened: only the stop ends this run
    control.holds[threadId] = hold;
    const abortsBefore = control.aborts;
    const viewerA = postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-s"));
    await waitFor(() => runnerB.isRunning({ threadId }), 15_000, "run running");
    let seen = 0;
    const viewerB = postSse(`${b.url}/agent/assistant/connect`, runInput(threadId, "c-s", null), {
      onEvent: (_, all) => { seen = all.length; },
    });
    await waitFor(() => seen >= MID, 5000, "the agent to reach its pause mid-message");
    const stop = await postJson(`${b.url}/agent/assistant/stop/${threadId}`, {});
    assert.equal(stop.status, 200);
    assert.equal(stop.body.stopped, true);
    await waitFor(() => control.aborts === abortsBefore + 1, 5000, "A's agent to observe the abort");
    for (const viewer of [await viewerA, await viewerB]) {
      const tail = types(viewer.events.slice(-2));
      assert.deepEqual(tail, [EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED], JSON.stringify(viewer.events.slice(-3)));
      // the script up to its pause, then CopilotKit's closers (finalizeRunEvents with stopRequested)
      const played = script(threadId, "run-s").slice(0, MID);
      assert.deepEqual(types(viewer.events.slice(0, MID)), types(played));
      assert.deepEqual(strip(viewer.events.slice(MID)), [
        { type: EventType.TEXT_MESSAGE_END, messageId: "m2-run-s" }, { type: EventType.RUN_FINISHED }]);
    }
    assert.equal(await runnerA.isRunning({ threadId }), false);
    // in IQ-Stream the run ended with the server's STOPPED, right after what the agent published
    const [stopped] = await runnerB.threadRuns(threadId);
    const raw = await runnerB.readAll(stopped.runId);
    assert.equal(raw.length, MID + 1);
    assert.deepEqual([raw.at(-1).type, raw.at(-1).code], [EventType.RUN_ERROR, "STOPPED"]);
    const again = await postJson(`${a.url}/agent/assistant/stop/${threadId}`, {});
    assert.equal(again.body.stopped, false, "nothing left to stop");
    delete control.holds[threadId];
  });

  test("a reader cut from IQ-Stream mid-run resumes with Last-Event-ID: no gap, no duplicate", async () => {
    const threadId = "thread-cut";
    const hold = latch();
    control.holds[threadId] = hold;
    const run = postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-x"));
    await waitFor(() => runnerB.isRunning({ threadId }), 15_000, "run running");
    let seen = 0;
    const viewer = postSse(`${bViaProxy.url}/agent/assistant/connect`, runInput(threadId, "c-x", null), {
      onEvent: (_, all) => { seen = all.length; },
    });
    await waitFor(() => seen >= 5, 5000, "viewer to get some events");
    const before = proxy.connections;
    proxy.cut();
    hold.open();
    const [res, direct] = await Promise.all([viewer, run]);
    assert.ok(proxy.connections > before, "the runner reconnected");
    assert.deepEqual(strip(res.events), strip(direct.events));
    delete control.holds[threadId];
  });

  test("instance A killed with SIGKILL mid-run: B's connect gets what was published, then PUBLISHER_LOST", async () => {
    const threadId = "thread-killed";
    const child = spawn(process.execPath, ["--preserve-symlinks", new URL("./instance.js", import.meta.url).pathname], {
      env: { ...process.env, IQ_URL: iq.baseUrl, IQ_SECRET: iq.secret, HOLD_THREAD: threadId },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const url = await new Promise((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (c) => {
          out += c;
          const m = /URL (\S+)/.exec(out);
          if (m) resolve(m[1]);
        });
        child.on("exit", (code) => reject(new Error(`instance exited ${code}`)));
      });
      postSse(`${url}/agent/assistant/run`, runInput(threadId, "run-k")).catch(() => {});
      await waitFor(() => runnerB.isRunning({ threadId }), 15_000, "the run running in A");
      let seen = 0;
      const viewer = postSse(`${b.url}/agent/assistant/connect`, runInput(threadId, "c-k", null), {
        onEvent: (_, all) => { seen = all.length; },
      });
      await waitFor(() => seen >= MID, 15_000, "B to see the run up to the agent's pause");
      child.kill("SIGKILL");
      const res = await viewer;
      assert.deepEqual(types(res.events.slice(0, MID)), types(script(threadId, "run-k").slice(0, MID)));
      assert.equal(res.events.length, MID + 1);
      assert.equal(res.events[MID].type, EventType.RUN_ERROR);
      assert.equal(res.events[MID].code, "PUBLISHER_LOST");
      assert.equal(await runnerB.isRunning({ threadId }), false);
      // other threads are untouched
      const other = await postSse(`${b.url}/agent/assistant/connect`, runInput("thread-plain", "c-o", null));
      assert.deepEqual(await messagesOf(other.events), await messagesOf(script("thread-plain", "run-plain").map((e, i) => (i === 0
        ? { ...e, input: runInput("thread-plain", "run-plain") } : e))));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });

  test("the JS publisher: a stop is its own outcome, answered at once on the open request", async () => {
    const runId = "ck.publisher-stop.0";
    const token = await runnerA.token();
    const publisher = new RunPublisher({ baseUrl: iq.baseUrl, runId, token }).open();
    publisher.send({ type: EventType.RUN_STARTED, threadId: "publisher-stop", runId: "r" });
    await waitFor(async () => (await runnerA.threadRuns("publisher-stop")).length === 1, 5000, "the run indexed");
    assert.equal(publisher.stopped, false);
    const del = await fetch(`${iq.baseUrl}/v1/runs/${runId}?ifRunning=true`, {
      method: "DELETE", headers: { Authorization: `Bearer ${token}` },
    });
    assert.deepEqual(await del.json(), { runId, stopped: true, lastEventId: 2 });
    const answer = await publisher.answer; // before end(): the server answered by itself
    assert.equal(answer.status, 409);
    assert.equal(answer.body.error, "run_stopped");
    assert.equal(answer.body.lastEventId, 2);
    assert.equal(publisher.stopped, true);
    assert.equal(publisher.send({ type: EventType.RUN_FINISHED }), false, "nothing more is sent");
    const [run] = await runnerA.threadRuns("publisher-stop");
    assert.deepEqual([run.running, run.events], [false, 2]);
  });
});
