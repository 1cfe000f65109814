// IqStreamAgentRunner with CopilotKit's own runtime (@copilotkit/runtime/v2) and a real IQ-Stream server.
// The runtime instances are separate Node processes, as two serverless instances or two pods would be
// (test/instance.js: the docs' example, examples/server.js, with the scripted agent): A and B reach
// IQ-Stream directly (the last test kills A with SIGKILL), C through a TCP proxy the test cuts. The
// browser side is CopilotKit's HTTP protocol (POST /agent/:id/run, /connect, /stop/:threadId) and
// CopilotKit's own client (ProxiedCopilotRuntimeAgent from @copilotkit/core). Runners made in the test
// process look into IQ-Stream and race on a thread.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { EventType } from "@ag-ui/client";
import { ProxiedCopilotRuntimeAgent } from "@copilotkit/core";
import { IqStreamAgentRunner, RunPublisher } from "../src/index.js";
import {
  MID, ScriptedAgent, latch, messagesOf, postJson, postSse, runInput, script, startInstance, startProxy,
  startServer, waitFor,
} from "./support.js";

const BOUND = { timeout: 60_000 }; // every test ends within a minute, passing or failing

let iq;
let proxy;
let a;
let b;
let c;
let runnerA;
let runnerB;

before(async () => {
  iq = await startServer(["--publisher-timeout", "1s", "--await-run", "2s"]);
  proxy = await startProxy(iq.port);
  [a, b, c] = await Promise.all([
    startInstance({ iqUrl: iq.baseUrl, secret: iq.secret }),
    startInstance({ iqUrl: iq.baseUrl, secret: iq.secret }),
    startInstance({ iqUrl: proxy.baseUrl, secret: iq.secret }),
  ]);
  runnerA = new IqStreamAgentRunner({ baseUrl: iq.baseUrl, jwtSecret: iq.secret });
  runnerB = new IqStreamAgentRunner({ baseUrl: iq.baseUrl, jwtSecret: iq.secret });
}, { timeout: 120_000 });

after(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
  await proxy?.close();
  await iq?.stop();
});

const types = (events) => events.map((e) => e.type);
const strip = (events) => events.map(({ timestamp, rawEvent, ...rest }) => rest); // eslint-disable-line no-unused-vars

/** The thread's run as IQ-Stream holds it: its RUN_STARTED's AG-UI input dropped (the uncut twin has another). */
const comparable = (events) => strip(events).map(({ input, threadId: t, ...e }) => e); // eslint-disable-line no-unused-vars

/** CopilotKit's own client for the agent on a runtime instance, on thread `threadId` (what the React chat uses). */
function chatClient(instance, threadId) {
  const agent = new ProxiedCopilotRuntimeAgent({ runtimeUrl: instance.url, agentId: "assistant" });
  agent.threadId = threadId;
  return agent;
}

/** The original run's messages: the script with its RUN_STARTED carrying the run's input, as the runner relays it. */
const scriptWithInput = (threadId, runId) => script(threadId, runId).map((e, i) => (i === 0
  ? { ...e, input: runInput(threadId, runId) } : e));

describe("IqStreamAgentRunner in CopilotRuntime, instances as processes", () => {
  test("a run through the runtime streams the agent's events via IQ-Stream", BOUND, async () => {
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
    assert.equal(await b.isRunning(threadId), false);
  });

  test("run on A cut mid-answer; B's connect gets the whole run and follows it to the end", BOUND, async () => {
    const threadId = "thread-connect";
    await a.hold(threadId);
    // the browser leaves instance A mid-answer (after a few words of the first message)
    const cutRun = await postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-c"), {
      onEvent: (e, all) => (all.length === 4 ? "cut" : undefined),
    });
    assert.equal(cutRun.cut, true);
    await waitFor(() => b.isRunning(threadId), 10_000, "B's runner to see A's run running");
    assert.equal(await a.isRunning(threadId), true, "and A's");
    // B's connect over CopilotKit's HTTP protocol, as the browser's reload would send it
    let connectSeen = 0;
    const connected = postSse(`${b.url}/agent/assistant/connect`, runInput(threadId, "connect-1", null), {
      onEvent: (_, all) => { connectSeen = all.length; },
    });
    // and CopilotKit's own client connecting to B, as the React chat does on mount
    const chat = chatClient(b, threadId);
    const chatEvents = [];
    const chatConnected = chat.connectAgent({}, { onEvent: ({ event }) => { chatEvents.push(event); } });
    await waitFor(() => connectSeen >= MID && chatEvents.length >= MID, 10_000, "both connects to deliver the run so far");
    assert.equal(connectSeen, MID, "nothing past the agent's pause");
    await a.open(threadId);
    const [res] = await Promise.all([connected, chatConnected]);
    assert.equal(res.status, 200);
    const uncut = await postSse(`${a.url}/agent/assistant/run`, runInput("thread-uncut", "run-c"));
    // the same run: every event once, in order; the messages AG-UI builds equal an uncut run's
    assert.deepEqual(comparable(res.events), comparable(uncut.events));
    assert.deepEqual(comparable(chatEvents), comparable(uncut.events));
    const uncutMessages = await messagesOf(uncut.events);
    assert.deepEqual(await messagesOf(res.events), uncutMessages);
    assert.deepEqual(chat.messages.filter((m) => m.role !== "user"), uncutMessages.filter((m) => m.role !== "user"),
      "CopilotKit's client holds the whole answer");
    await waitFor(async () => !(await a.isRunning(threadId)), 5000, "isRunning false on A after the end");
    assert.equal(await b.isRunning(threadId), false, "and on B");
  });

  test("connect on an unknown thread completes empty; on a finished thread replays it compacted", BOUND, async () => {
    const empty = await postSse(`${b.url}/agent/assistant/connect`, runInput("thread-never", "c-0", null));
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.events, []);
    const replay = await postSse(`${b.url}/agent/assistant/connect`, runInput("thread-plain", "c-1", null));
    const original = script("thread-plain", "run-plain");
    assert.ok(replay.events.length < original.length, "text deltas are compacted");
    assert.deepEqual(await messagesOf(replay.events), await messagesOf(scriptWithInput("thread-plain", "run-plain")));
  });

  test("a second run on a running thread is refused, from any instance", BOUND, async () => {
    const threadId = "thread-busy";
    await a.hold(threadId);
    const runsBefore = { a: (await a.state()).runs, b: (await b.state()).runs };
    const first = postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-1"));
    await waitFor(() => b.isRunning(threadId), 15_000, "first run running");
    await waitFor(async () => (await a.state()).runs === runsBefore.a + 1, 5000, "the first agent run to start");
    // through B's runtime: an empty stream, as with the built-in runner (whose run() throws)
    const second = await postSse(`${b.url}/agent/assistant/run`, runInput(threadId, "run-2", "again"));
    assert.deepEqual(second.events, []);
    // and a runner's observable fails with the built-in runner's message
    const local = { holds: {}, aborts: 0, runs: 0 };
    const refused = await new Promise((resolve) => {
      runnerB.run({ threadId, agent: new ScriptedAgent(local), input: runInput(threadId, "run-2b") })
        .subscribe({ next: () => resolve(null), error: resolve, complete: () => resolve(null) });
    });
    assert.match(String(refused?.message), /Thread already running/);
    assert.equal((await b.state()).runs, runsBefore.b, "no agent run started on B");
    assert.equal((await a.state()).runs, runsBefore.a + 1, "nor a second one on A");
    assert.equal(local.runs, 0);
    await a.open(threadId);
    const res = await first;
    assert.equal(res.events.at(-1).type, EventType.RUN_FINISHED);
    // and the thread takes a next run once the first ended: the index lists both, in order
    const third = await postSse(`${b.url}/agent/assistant/run`, runInput(threadId, "run-3", "next"));
    assert.equal(third.events.at(-1).type, EventType.RUN_FINISHED);
    const held = await runnerA.threadRuns(threadId);
    assert.deepEqual(held.map((r) => [r.runId, r.running]),
      [[runnerA.runIdOf(threadId, 0), false], [runnerA.runIdOf(threadId, 1), false]]);
    assert.ok(held[0].endedAt <= held[1].startedAt, "oldest first");
  });

  test("two runners starting a run on the same new thread at once: one runs, the other is refused", BOUND, async () => {
    const threadId = "thread-race";
    const local = { holds: {}, aborts: 0, runs: 0 };
    const outcome = (runner, runId) => new Promise((resolve) => {
      const events = [];
      runner.run({ threadId, agent: new ScriptedAgent(local, { threadId }), input: runInput(threadId, runId) }).subscribe({
        next: (e) => events.push(e),
        error: (err) => resolve({ error: err.message, events }),
        complete: () => resolve({ events }),
      });
    });
    const hold = latch(); // the winner stays running until the loser has its answer
    local.holds[threadId] = hold;
    const racing = [outcome(runnerA, "race-a"), outcome(runnerB, "race-b")];
    const firstDone = await Promise.race(racing);
    assert.match(firstDone.error ?? "", /Thread already running/, JSON.stringify(firstDone));
    hold.open();
    const results = await Promise.all(racing);
    const finished = results.filter((r) => r.events.at(-1)?.type === EventType.RUN_FINISHED && !r.error);
    const refused = results.filter((r) => /Thread already running/.test(r.error ?? ""));
    assert.equal(finished.length, 1, JSON.stringify(results.map((r) => r.error ?? r.events.length)));
    assert.equal(refused.length, 1);
    assert.equal(local.runs, 1, "one agent run");
    const held = await runnerA.threadRuns(threadId);
    assert.equal(held.length, 1, "one run in IQ-Stream");
  });

  test("a thread whose only run was dropped (its id tombstoned) takes a fresh run id; one agent run each", BOUND, async () => {
    const threadId = "thread-tombstoned";
    const local = { holds: {}, aborts: 0, runs: 0 };
    const runOnce = (runId) => new Promise((resolve, reject) => {
      const events = [];
      runnerA.run({ threadId, agent: new ScriptedAgent(local), input: runInput(threadId, runId) })
        .subscribe({ next: (e) => events.push(e), error: reject, complete: () => resolve(events) });
    });
    const first = await runOnce("t-1");
    assert.equal(first.at(-1).type, EventType.RUN_FINISHED);
    const dropped = runnerA.runIdOf(threadId, 0);
    const del = await fetch(`${iq.baseUrl}/v1/runs/${dropped}`, {
      method: "DELETE", headers: { Authorization: `Bearer ${await runnerA.token()}` },
    });
    assert.equal(del.status, 204, "the ended run is dropped and its id tombstoned");
    assert.deepEqual(await runnerA.threadRuns(threadId), []);
    const second = await runOnce("t-2");
    assert.deepEqual(types(second), types(script(threadId, "t-2")));
    const [held] = await runnerA.threadRuns(threadId);
    assert.notEqual(held.runId, dropped, "a time-based id instead of the tombstoned .0");
    assert.equal(local.runs, 2, "one agent run per run: none started on the tombstoned id");
  });

  test("stop on instance B stops the agent running in instance A; every viewer gets the closing events", BOUND, async () => {
    const threadId = "thread-stop";
    await a.hold(threadId); // never opened: only the stop ends this run
    const viewerA = postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-s"));
    await waitFor(() => b.isRunning(threadId), 15_000, "B to see the run running");
    let seen = 0;
    const viewerB = postSse(`${b.url}/agent/assistant/connect`, runInput(threadId, "c-s", null), {
      onEvent: (_, all) => { seen = all.length; },
    });
    const chat = chatClient(c, threadId); // CopilotKit's client on a third instance
    const chatConnected = chat.connectAgent();
    await waitFor(() => seen >= MID, 5000, "the agent to reach its pause mid-message");
    assert.deepEqual((await a.state()).aborted, [], "no abort before the stop");
    const stop = await postJson(`${b.url}/agent/assistant/stop/${threadId}`, {});
    assert.equal(stop.status, 200);
    assert.equal(stop.body.stopped, true);
    await waitFor(async () => (await a.state()).aborted.includes(threadId), 5000, "A's agent to observe the abort");
    assert.ok(!(await b.state()).aborted.includes(threadId), "the agent ran in A, not B");
    for (const viewer of [await viewerA, await viewerB]) {
      const tail = types(viewer.events.slice(-2));
      assert.deepEqual(tail, [EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED], JSON.stringify(viewer.events.slice(-3)));
      // the script up to its pause, then CopilotKit's closers (finalizeRunEvents with stopRequested)
      const played = script(threadId, "run-s").slice(0, MID);
      assert.deepEqual(types(viewer.events.slice(0, MID)), types(played));
      assert.deepEqual(strip(viewer.events.slice(MID)), [
        { type: EventType.TEXT_MESSAGE_END, messageId: "m2-run-s" }, { type: EventType.RUN_FINISHED }]);
    }
    await chatConnected;
    assert.deepEqual(chat.messages, await messagesOf((await viewerB).events), "CopilotKit's client: the answer up to the stop");
    assert.equal(chat.isRunning, false);
    assert.equal(await b.isRunning(threadId), false);
    assert.equal(await a.isRunning(threadId), false);
    // in IQ-Stream the run ended with the server's STOPPED, right after what the agent published
    const [stopped] = await runnerB.threadRuns(threadId);
    const raw = await runnerB.readAll(stopped.runId);
    assert.equal(raw.length, MID + 1);
    assert.deepEqual([raw.at(-1).type, raw.at(-1).code], [EventType.RUN_ERROR, "STOPPED"]);
    const again = await postJson(`${a.url}/agent/assistant/stop/${threadId}`, {});
    assert.equal(again.body.stopped, false, "nothing left to stop");
  });

  test("a reader cut from IQ-Stream mid-run resumes with Last-Event-ID: no gap, no duplicate", BOUND, async () => {
    const threadId = "thread-cut";
    await a.hold(threadId);
    const run = postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-x"));
    await waitFor(() => b.isRunning(threadId), 15_000, "run running");
    let seen = 0;
    const viewer = postSse(`${c.url}/agent/assistant/connect`, runInput(threadId, "c-x", null), {
      onEvent: (_, all) => { seen = all.length; },
    });
    await waitFor(() => seen >= 5, 5000, "viewer to get some events");
    const before = proxy.connections;
    proxy.cut();
    await a.open(threadId);
    const [res, direct] = await Promise.all([viewer, run]);
    assert.ok(proxy.connections > before, "C's runner reconnected");
    assert.deepEqual(strip(res.events), strip(direct.events));
  });

  test("the JS publisher: a stop is its own outcome, answered at once on the open request", BOUND, async () => {
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
  test("instance A killed with SIGKILL mid-run: B's connect gets what was published, then PUBLISHER_LOST", BOUND, async () => {
    // the last test: A is gone after it
    const threadId = "thread-killed";
    try {
      await a.hold(threadId);
      postSse(`${a.url}/agent/assistant/run`, runInput(threadId, "run-k")).catch(() => {});
      await waitFor(() => b.isRunning(threadId), 15_000, "the run running in A");
      let seen = 0;
      const viewer = postSse(`${b.url}/agent/assistant/connect`, runInput(threadId, "c-k", null), {
        onEvent: (_, all) => { seen = all.length; },
      });
      await waitFor(() => seen >= MID, 15_000, "B to see the run up to the agent's pause");
      await a.kill();
      const res = await viewer;
      assert.deepEqual(types(res.events.slice(0, MID)), types(script(threadId, "run-k").slice(0, MID)));
      assert.equal(res.events.length, MID + 1);
      assert.equal(res.events[MID].type, EventType.RUN_ERROR);
      assert.equal(res.events[MID].code, "PUBLISHER_LOST");
      assert.equal(await b.isRunning(threadId), false);
      // other threads are untouched
      const other = await postSse(`${b.url}/agent/assistant/connect`, runInput("thread-plain", "c-o", null));
      assert.deepEqual(await messagesOf(other.events), await messagesOf(scriptWithInput("thread-plain", "run-plain")));
    } finally {
      await a.kill();
    }
  });

});
