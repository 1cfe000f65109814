// A node's death loses nothing while the producer lives (issue 34): two real IQ-Stream nodes with --peers behind a
// TCP proxy (the balancer); the node holding a run being published by RunPublisher is SIGKILLed mid-run; the
// publisher restores the run on the survivor with the same event ids and goes on; a reader that resumes with
// Last-Event-ID through the survivor before the restore waits for it and gets exactly the rest.
import assert from "node:assert/strict";
import http from "node:http";
import { after, test } from "node:test";
import { RunPublisher } from "../src/publisher.js";
import { freePort, metric, newRunId, startProxy, startServer, waitFor } from "./support.js";

const CLUSTER_SECRET = "js-client-test-cluster-secret-0123456789abcdef";
const nodes = [];
let proxy;
after(async () => {
  // the nodes first: a proxy's close waits for its connections, which end with their upstream
  for (const n of nodes) await n.stop();
  await Promise.race([proxy?.close(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
});

/** Reads a run's SSE ids from `port`, resuming after `lastEventId`; resolves with the ids when the stream ends. */
function readIds(port, runId, token, lastEventId) {
  return new Promise((resolve, reject) => {
    const headers = { Authorization: `Bearer ${token}`, Accept: "text/event-stream" };
    if (lastEventId) headers["Last-Event-ID"] = String(lastEventId);
    const req = http.get({ host: "127.0.0.1", port, path: `/v1/runs/${runId}/events`, headers }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`subscribe answered ${res.statusCode}`));
        res.resume();
        return;
      }
      const ids = [];
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        buf += c;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.startsWith("id: ")) ids.push(Number(line.slice(4)));
        }
      });
      res.on("end", () => resolve(ids));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
}

test("the publisher restores its run on the survivor when the node holding it is killed", { timeout: 120_000 }, async () => {
  const [pa, pb] = [await freePort(), await freePort()];
  const peers = `127.0.0.1:${pa},127.0.0.1:${pb}`;
  const flags = (p) => ["--port", String(p), "--peers", peers, "--advertise", `127.0.0.1:${p}`,
    "--cluster-secret", CLUSTER_SECRET, "--await-run", "15s"];
  const a = await startServer(flags(pa));
  nodes.push(a);
  const b = await startServer(flags(pb), { secret: a.secret });
  nodes.push(b);
  await waitFor(async () => (await metric(pa, 'iqstream_cluster_members{state="ready"}')) === 2
    && (await metric(pb, 'iqstream_cluster_members{state="ready"}')) === 2, 60_000, "both nodes ready with two members");
  proxy = await startProxy(pa);
  const runId = newRunId("restore");
  const token = a.token({ publish: [runId], subscribe: [runId] });
  const publisher = new RunPublisher({ baseUrl: proxy.baseUrl, runId, token }).open();
  publisher.send({ type: "RUN_STARTED", threadId: "t", runId });
  publisher.send({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" });
  for (let i = 0; i < 10; i++) publisher.send({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: `token-${i} ` });
  await waitFor(async () => {
    const r = await fetch(`http://127.0.0.1:${pa}/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${token}` } });
    return r.status === 200 && (await r.json()).events === 12;
  }, 20_000, "the first 12 events in the run");
  const onA = (await metric(pa, "iqstream_runs_active")) === 1;
  assert.ok(onA !== ((await metric(pb, "iqstream_runs_active")) === 1), "exactly one node holds the run");
  const [holder, survivor] = onA ? [a, pb] : [b, pa];
  proxy.retarget(survivor);
  await holder.stop(); // SIGKILL
  proxy.cut();
  // a reader that had 12 events resumes through the survivor before the run is restored: it waits for it
  const resumed = readIds(survivor, runId, token, 12);
  for (let i = 10; i < 20; i++) {
    publisher.send({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: `token-${i} ` });
    await new Promise((r) => setTimeout(r, 50)); // pacing the model's output
  }
  publisher.send({ type: "TEXT_MESSAGE_END", messageId: "m" });
  publisher.send({ type: "RUN_FINISHED", threadId: "t", runId });
  const answer = await publisher.end();
  assert.deepEqual(answer, { status: 200, body: { runId, lastEventId: 24, ended: true } });
  assert.equal(publisher.restores, 1, "the run was restored once");
  assert.deepEqual(await resumed, Array.from({ length: 12 }, (_, k) => 13 + k), "exactly the rest, in order");
  assert.equal(await metric(survivor, "iqstream_cluster_restores_total"), 1, "the survivor counts the restore");
});
