// RunPublisher (@iqstream/client/publisher) against a real IQ-Stream server: one streamed request,
// and a stop (DELETE) as its own outcome, answered at once on the open request.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { RunPublisher, publishEvents } from "../src/publisher.js";
import { newRunId, startServer } from "./support.js";

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

test("a run streamed over one request ends with the server's 200", async () => {
  const runId = newRunId("pub");
  const token = server.token({ publish: [runId], subscribe: [runId] });
  const publisher = new RunPublisher({ baseUrl: server.baseUrl, runId, token }).open();
  assert.equal(publisher.send({ type: "RUN_STARTED", threadId: "t", runId }), true);
  publisher.send({ type: "RUN_FINISHED", threadId: "t", runId });
  const answer = await publisher.end();
  assert.deepEqual(answer, { status: 200, body: { runId, lastEventId: 2, ended: true } });
  assert.equal(publisher.stopped, false);
  const again = await publishEvents({ baseUrl: server.baseUrl, runId, token }, [{ type: "STEP_STARTED", stepName: "s" }]);
  assert.equal(again.status, 409);
  assert.equal(again.body.error, "run_ended");
});

test("a stop from elsewhere is answered at once on the open request: 409 run_stopped, stopped = true", async () => {
  const runId = newRunId("pub");
  const token = server.token({ publish: [runId], subscribe: [runId] });
  let told = null;
  const publisher = new RunPublisher({ baseUrl: server.baseUrl, runId, token, onAnswer: (a) => { told = a; } }).open();
  publisher.send({ type: "RUN_STARTED", threadId: "t", runId });
  publisher.send({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" });
  // wait until both events are in (the run's status says 2)
  for (let i = 0; i < 500; i++) {
    const s = await fetch(`${server.baseUrl}/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${token}` } });
    if (s.status === 200 && (await s.json()).events === 2) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const del = await fetch(`${server.baseUrl}/v1/runs/${runId}`, { method: "DELETE", headers: { Authorization: `Bearer ${token}` } });
  assert.deepEqual(await del.json(), { runId, stopped: true, lastEventId: 3 });
  const answer = await publisher.answer; // no end(): the server answered by itself
  assert.equal(answer.status, 409);
  assert.equal(answer.body.error, "run_stopped");
  assert.equal(answer.body.lastEventId, 3);
  assert.equal(publisher.stopped, true);
  assert.deepEqual(told, answer, "onAnswer is told");
  assert.equal(publisher.send({ type: "TEXT_MESSAGE_END", messageId: "m" }), false, "nothing more is sent");
});

test("a publisher still streaming into an ended run reads the 409, not a connection reset", async () => {
  const runId = newRunId("pub");
  const token = server.token({ publish: [runId], subscribe: [runId] });
  const done = await publishEvents({ baseUrl: server.baseUrl, runId, token },
    [{ type: "RUN_STARTED", threadId: "t", runId }, { type: "RUN_FINISHED", threadId: "t", runId }]);
  assert.equal(done.status, 200);
  // the server refuses at the request's start while this publisher goes on streaming its events; before the
  // server closed gently, its close on unread bytes reset the connection and the answer was status 0 (ECONNRESET)
  const publisher = new RunPublisher({ baseUrl: server.baseUrl, runId, token }).open();
  publisher.send({ type: "RUN_STARTED", threadId: "t", runId });
  for (let i = 0; i < 300; i++) {
    if (!publisher.send({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "x".repeat(200) })) break;
    await new Promise((r) => setTimeout(r, 1));
  }
  const answer = await publisher.answer;
  assert.equal(answer.status, 409, JSON.stringify(answer));
  assert.equal(answer.body.error, "run_ended");
});
