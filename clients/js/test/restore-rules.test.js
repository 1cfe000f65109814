// The publisher's restore rules (DEPLOY.md, "Restore: the protocol"), against a node whose answers the test
// scripts, on a real socket: a status answered 503 (a peer did not answer the lookup) is asked again, never taken
// for "no node holds it" — a restore then would make a second copy beside the node that holds the run; a 404 is
// restored (X-IQStream-Restore, Last-Event-ID 0, every line again); past restoreBufferBytes, or with it 0 (off), a
// break ends the publish (status 0) and nothing is restored.
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { RunPublisher } from "../src/publisher.js";

const line = (i) => ({ type: "CUSTOM", name: "e", value: i });

/**
 * A node that takes the publish's first request, cuts it once it has read `cutAfter` lines, then answers the run's
 * status from `statuses` (one per ask, the last repeated) and any later publish request with 200. Records every
 * request: method, headers, the body lines read.
 */
async function scriptedNode(cutAfter, statuses) {
  const requests = [];
  let asked = 0;
  let cut;
  const cutDone = new Promise((resolve) => { cut = resolve; });
  const server = http.createServer((req, res) => {
    const seen = { method: req.method, headers: req.headers, lines: [] };
    requests.push(seen);
    if (req.method === "GET") {
      const [status, body] = statuses[Math.min(asked++, statuses.length - 1)];
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      return;
    }
    const first = requests.filter((r) => r.method === "POST").length === 1;
    let buf = "";
    req.setEncoding("utf8");
    req.on("data", (c) => {
      buf += c;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        seen.lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (first && seen.lines.length === cutAfter) {
          req.socket.destroy();
          cut();
        }
      }
    });
    req.on("end", () => {
      if (!first) res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { requests, cutDone, baseUrl: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) };
}

/** Publishes lines 1..n, the node cutting the request after `cutAfter`; resolves with the answer. */
async function publishThroughACut(node, options, n, cutAfter) {
  const p = new RunPublisher({ baseUrl: node.baseUrl, runId: "r-1", maxRetries: 8, ...options }).open();
  for (let i = 1; i <= cutAfter; i++) p.send(line(i));
  await node.cutDone;
  for (let i = cutAfter + 1; i <= n; i++) p.send(line(i));
  const answer = await p.end();
  return { p, answer };
}

const posts = (node) => node.requests.filter((r) => r.method === "POST");

test("a status answered 503 is asked again, never taken for a lost run: the run is continued, not restored", async () => {
  const node = await scriptedNode(2, [
    [503, { error: "peer_unavailable" }],
    [503, { error: "peer_unavailable" }],
    [200, { runId: "r-1", events: 2, ended: false, publishing: false }],
  ]);
  try {
    const { p, answer } = await publishThroughACut(node, {}, 3, 2);
    assert.equal(answer.status, 200, JSON.stringify(answer));
    assert.equal(node.requests.filter((r) => r.method === "GET").length, 3, "asked until the status was known");
    const after = posts(node).slice(1);
    for (const r of after) {
      assert.equal(r.headers["x-iqstream-restore"], undefined, "a 503 status is never a restore");
    }
    assert.equal(after.length, 1, "one continuation");
    assert.equal(after[0].headers["last-event-id"], "2", "continued after the events the node holds");
    assert.deepEqual(after[0].lines, [JSON.stringify(line(3))], "only what the node does not hold");
    assert.equal(p.restores, 0);
  } finally {
    await node.close();
  }
});

test("a status answered 404 restores the run: every kept line again, from event 1", async () => {
  const node = await scriptedNode(2, [[404, { error: "run_not_found" }]]);
  try {
    const { p, answer } = await publishThroughACut(node, {}, 3, 2);
    assert.equal(answer.status, 200, JSON.stringify(answer));
    const after = posts(node).slice(1);
    assert.equal(after.length, 1, "one restore");
    assert.equal(after[0].headers["x-iqstream-restore"], "3", "the restore names the events it resends");
    assert.equal(after[0].headers["last-event-id"], "0");
    assert.deepEqual(after[0].lines, [1, 2, 3].map((i) => JSON.stringify(line(i))));
    assert.equal(p.restores, 1);
  } finally {
    await node.close();
  }
});

for (const [name, options] of [["past restoreBufferBytes", { restoreBufferBytes: 60 }],
  ["with restoreBufferBytes 0 (off)", { restoreBufferBytes: 0 }], ["with restore: false", { restore: false }]]) {
  test(`${name}, a break ends the publish and nothing is restored`, async () => {
    const node = await scriptedNode(2, [[404, { error: "run_not_found" }]]);
    try {
      const { p, answer } = await publishThroughACut(node, options, 3, 2);
      assert.equal(answer.status, 0, JSON.stringify(answer));
      assert.equal(posts(node).length, 1, "no second request: nothing was kept to restore from");
      assert.equal(p.restores, 0);
    } finally {
      await node.close();
    }
  });
}
