// IqStreamAgent as AG-UI runs it (runAgent / connectAgent, with AG-UI's own verifier and
// reducer in the pipeline), against the real server process.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  ForbiddenError,
  IqStreamAgent,
  RunGoneError,
  RunNotFoundError,
  UnauthorizedError,
  memoryStorage,
} from "../src/index.js";
import {
  countingFetch,
  latch,
  newRunId,
  publishAll,
  publishStreaming,
  startProxy,
  startServer,
  waitFor,
} from "./support.js";
import { assistantTexts, workloadRun } from "./workload.js";

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true";

/** An AG-UI subscriber that records every event the agent's pipeline delivers. */
function recorder() {
  const events = [];
  return { events, subscriber: { onEvent: ({ event }) => { events.push(event); } } };
}

/** What AG-UI's reducer made of the run: assistant texts and tool calls, from agent.messages. */
function transcript(agent) {
  return {
    texts: agent.messages.filter((m) => m.role === "assistant" && typeof m.content === "string" && m.content.length > 0).map((m) => m.content),
    toolCalls: agent.messages.flatMap((m) => m.toolCalls ?? []).map((t) => ({ name: t.function.name, args: JSON.parse(t.function.arguments) })),
    toolResults: agent.messages.filter((m) => m.role === "tool").map((m) => m.content.length),
  };
}

function expectedTranscript(events) {
  const args = events.filter((e) => e.type === "TOOL_CALL_ARGS").map((e) => e.delta).join("");
  const start = events.find((e) => e.type === "TOOL_CALL_START");
  const result = events.find((e) => e.type === "TOOL_CALL_RESULT");
  return {
    texts: assistantTexts(events),
    toolCalls: start ? [{ name: start.toolCallName, args: JSON.parse(args) }] : [],
    toolResults: result ? [result.content.length] : [],
  };
}

describe("IqStreamAgent against IQ-Stream", () => {
  let server;
  let proxy;
  before(async () => {
    server = await startServer(["--retry", "150ms", "--retry-jitter", "0", "--await-run", "2s"]);
    proxy = await startProxy(server.port);
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
  });

  test("runAgentHandsAgUiTheWholePublishedRun", async () => {
    const runId = newRunId();
    const events = workloadRun();
    await publishAll(server, runId, events);
    const agent = new IqStreamAgent({ baseUrl: server.baseUrl, runId, token: server.token({ subscribe: [runId] }), storage: null });
    const rec = recorder();
    await agent.runAgent({}, rec.subscriber);

    assert.equal(rec.events.length, events.length);
    assert.deepEqual(rec.events.map((e) => e.type), events.map((e) => e.type));
    assert.deepEqual(transcript(agent), expectedTranscript(events));
    assert.equal(agent.lastEventId, events.length);
  });

  test("startRunAsksTheBackendForARunAndItsToken", async () => {
    const events = workloadRun({ firstAnswerTokens: 30, toolArgFragments: 5, secondAnswerTokens: 10 });
    let seenInput;
    let publishing;
    const agent = new IqStreamAgent({
      baseUrl: server.baseUrl,
      storage: null,
      // what a product backend does: start the agent, publish to a fresh run, return run id + token
      startRun: async (input) => {
        seenInput = input;
        const runId = newRunId("chat");
        publishing = publishStreaming(server, runId, events, { gapMs: 1 });
        publishing.catch(() => {}); // awaited below; this only keeps an early rejection from going unhandled
        return { runId, token: server.token({ subscribe: [runId] }) };
      },
    });
    agent.addMessage({ id: "u1", role: "user", content: "search the docs" });
    const rec = recorder();
    await agent.runAgent({}, rec.subscriber);
    assert.equal(seenInput.messages.at(-1).content, "search the docs");
    assert.deepEqual(rec.events.map((e) => e.type), events.map((e) => e.type));
    assert.deepEqual(transcript(agent).texts, assistantTexts(events));
    // the backend's publish must have succeeded too: a refused or broken publish fails the test
    const reply = await publishing;
    assert.equal(reply.lastEventId, events.length);
    assert.equal(reply.ended, true);
  });

  test("survivesConnectionCutsMidAnswerWithExactlyThePublishedSequence", async () => {
    const runId = newRunId();
    const events = workloadRun({ firstAnswerTokens: 80, toolArgFragments: 20, toolResultBytes: 4096, secondAnswerTokens: 80 });
    const reconnects = [];
    const agent = new IqStreamAgent({
      baseUrl: proxy.baseUrl,
      runId,
      token: server.token({ subscribe: [runId] }),
      storage: null,
      onReconnect: (r) => reconnects.push(r),
    });
    const rec = recorder();
    const cuts = new Set([15, 90, 185]);
    const subscriber = {
      ...rec.subscriber,
      onEvent: ({ event }) => {
        rec.events.push(event);
        if (cuts.has(rec.events.length)) proxy.cut();
      },
    };
    const publishing = publishStreaming(server, runId, events, { gapMs: 2 });
    await agent.runAgent({}, subscriber);
    await publishing;

    // AG-UI hands events to subscribers asynchronously, so two cuts can land on one connection
    assert.ok(reconnects.length >= 2, `reconnected ${reconnects.length} times`);
    assert.ok(reconnects.every((r) => r.lastEventId > 0), "every reconnect resumed after an event");
    assert.deepEqual(rec.events, events, "no gap, no duplicate, events unchanged");
    assert.equal(rec.events.filter((e) => e.type === "RUN_STARTED").length, 1, "one RUN_STARTED");
    assert.deepEqual(transcript(agent), expectedTranscript(events));
  });

  test("reattachesAfterAReloadAndRebuildsTheAnswer", async () => {
    const runId = newRunId();
    const threadId = "thread-reload";
    const events = workloadRun({ firstAnswerTokens: 60, toolArgFragments: 10, secondAnswerTokens: 40 });
    const storage = memoryStorage();
    const hold = latch();
    const publishing = publishStreaming(server, runId, events, { gapMs: 1, waitBefore: (i) => (i === 50 ? hold.wait() : undefined) });

    // Page 1: reads part of the answer, then the page goes away (the read is abandoned).
    const page1 = new IqStreamAgent({ baseUrl: server.baseUrl, threadId, runId, token: server.token({ subscribe: [runId] }), storage });
    const seen1 = [];
    const page1Done = page1.runAgent({}, {
      onEvent: ({ event }) => {
        seen1.push(event);
        if (seen1.length === 30) page1.abortRun();
      },
    });
    await page1Done;
    // AG-UI delivers to subscribers asynchronously, so a few more events may have been
    // handed on before the abort landed; the stored cursor is the last one handed on.
    assert.ok(seen1.length >= 30 && seen1.length < events.length, `page 1 stopped early (${seen1.length})`);
    const stored = page1.storedRun();
    assert.equal(stored.runId, runId);
    assert.equal(stored.lastEventId, page1.lastEventId);
    assert.ok(stored.lastEventId >= 30 && stored.lastEventId <= 50, `stored cursor ${stored.lastEventId}`);

    // Page 2: a new agent on the same thread and storage; AG-UI's connectAgent reattaches.
    hold.open();
    const fetchFn = countingFetch();
    const page2 = new IqStreamAgent({ baseUrl: server.baseUrl, threadId, storage, fetch: fetchFn });
    const rec = recorder();
    await page2.connectAgent({}, rec.subscriber);
    await publishing;

    assert.equal(page2.currentRunId, runId);
    assert.equal(page2.resumedFromEventId, stored.lastEventId);
    assert.deepEqual(rec.events, events, "the whole run, each event once");
    assert.deepEqual(transcript(page2), expectedTranscript(events));
    assert.equal(page2.storedRun(), null, "the stored run is cleared once it ended");
    assert.ok(fetchFn.calls[0].headers.Authorization.startsWith("Bearer "), "the stored token was used");

    // Page 3: nothing stored any more, connectAgent does nothing.
    const page3 = new IqStreamAgent({ baseUrl: server.baseUrl, threadId, storage, fetch: countingFetch() });
    const rec3 = recorder();
    await page3.connectAgent({}, rec3.subscriber);
    assert.equal(rec3.events.length, 0);
  });

  test("rejectsWithTypedErrorsAndNoRetryLoop", async () => {
    const runId = newRunId();
    await publishAll(server, runId, workloadRun({ firstAnswerTokens: 2, toolArgFragments: 0, secondAnswerTokens: 0 }));
    const cases = [
      { name: "401", token: undefined, type: UnauthorizedError, status: 401 },
      { name: "403", token: server.token({ subscribe: ["not-this-run"] }), type: ForbiddenError, status: 403 },
      { name: "404", runId: newRunId("nope"), token: server.token({ subscribe: ["*"] }), type: RunNotFoundError, status: 404 },
    ];
    const originalError = console.error;
    console.error = () => {}; // AG-UI logs "Agent execution failed" before rethrowing
    try {
      for (const c of cases) {
        const fetchFn = countingFetch();
        const storage = memoryStorage();
        const agent = new IqStreamAgent({ baseUrl: server.baseUrl, runId: c.runId ?? runId, token: c.token, storage, fetch: fetchFn });
        await assert.rejects(agent.runAgent(), (err) => {
          assert.ok(err instanceof c.type, `${c.name}: got ${err}`);
          assert.equal(err.status, c.status);
          return true;
        });
        assert.equal(fetchFn.calls.length, 1, `${c.name}: one request`);
        assert.equal(agent.isRunning, false);
      }
    } finally {
      console.error = originalError;
    }
  });
});

describe("IqStreamAgent after retention", () => {
  let server;
  before(async () => {
    server = await startServer(["--retention", "300ms"]);
  });
  after(async () => server?.stop());

  test("rejectsAnExpiredRunWithRunGoneErrorAndForgetsIt", async () => {
    const runId = newRunId();
    await publishAll(server, runId, workloadRun({ firstAnswerTokens: 2, toolArgFragments: 0, secondAnswerTokens: 0 }));
    const token = server.token({ subscribe: [runId] });
    await waitFor(async () => {
      const r = await fetch(`${server.baseUrl}/v1/runs/${runId}/events`, { headers: { Authorization: `Bearer ${token}` } });
      await r.body?.cancel();
      return r.status === 410;
    }, 10_000, "410");
    const storage = memoryStorage();
    storage.setItem("iqstream:run:t-gone", JSON.stringify({ runId, lastEventId: 2, token }));
    const fetchFn = countingFetch();
    const agent = new IqStreamAgent({ baseUrl: server.baseUrl, threadId: "t-gone", storage, fetch: fetchFn });
    const originalError = console.error;
    console.error = () => {};
    try {
      await assert.rejects(agent.connectAgent(), (err) => err instanceof RunGoneError && err.status === 410);
    } finally {
      console.error = originalError;
    }
    assert.equal(fetchFn.calls.length, 1);
    assert.equal(agent.storedRun(), null);
  });
});
