// A lost run restored by its producer (issue 34): RunLog keeps the run's event lines; when no node holds the run
// any more (the balancer's node died and the next one has never seen it: 409 run_lost), the next append restores
// it with X-IQStream-Restore, the same ids, and a reader resuming with Last-Event-ID gets exactly the rest.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { RunLog } from "../src/run-log.js";
import { startBalancer, startServer } from "./support.js";

const started = [];
after(async () => {
  for (const s of started) await s.stop();
});

async function readIds(baseUrl, runId, token, lastEventId) {
  const r = await fetch(`${baseUrl}/v1/runs/${runId}/events`, {
    headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream", "Last-Event-ID": String(lastEventId) },
  });
  assert.equal(r.status, 200, "the resumed read waits for the restore, then streams");
  const text = await r.text();
  return text.split("\n").filter((l) => l.startsWith("id: ")).map((l) => Number(l.slice(4)));
}

test("a run whose node died is restored by the next append with the same ids", { timeout: 90_000 }, async () => {
  const first = await startServer(["--await-run", "20s"]);
  started.push(first);
  const second = await startServer(["--await-run", "20s"], { secret: first.secret });
  started.push(second);
  const lb = await startBalancer(first.port);
  try {
    const runId = `restore-${Date.now()}`;
    const token = first.token({ publish: [runId], subscribe: [runId] });
    const log = new RunLog({ baseUrl: new URL(lb.url).origin, iqRunId: runId, token, leaseMs: 0, maxPauseMs: 0,
      fetch: (u, i) => globalThis.fetch(u, i) });
    const line = (e) => JSON.stringify(e);
    assert.deepEqual(await log.append([
      line({ type: "RUN_STARTED", threadId: "t", runId }),
      line({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" }),
      line({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "one " }),
    ]), [1, 2, 3]);
    await first.stop(); // SIGKILL: the run is gone with its node
    lb.target = second.port;
    lb.cut();
    const resumed = readIds(second.baseUrl, runId, token, 3); // a reader with 3 events, before the restore
    assert.deepEqual(await log.append([
      line({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "two" }),
      line({ type: "TEXT_MESSAGE_END", messageId: "m" }),
      line({ type: "RUN_FINISHED", threadId: "t", runId }),
    ]), [4, 5, 6], "the batch keeps the ids it would have had");
    assert.equal(log.restores, 1);
    assert.deepEqual(await resumed, [4, 5, 6], "the resumed reader got exactly the rest");
    const all = await log.tail();
    assert.deepEqual(all.map((i) => i.event.type), ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"], "the run is whole on the new node, in order");
  } finally {
    await lb.close();
  }
});
