// @durable-streams/client 0.2.7, unchanged, against IQ-Stream's /v1/stream/ (JWTs in its `headers` option):
// DurableStream.create, IdempotentProducer, stream() with live SSE and long-poll, resume from a saved offset,
// closure as EOF, and the 401 / 403 a token that does not match the stream's path gets.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { DurableStream, IdempotentProducer, stream } from "@durable-streams/client";
import { SERVER, startTarget, uniquePath, waitFor } from "./support.js";

let target;
before(async () => { target = await startTarget(); });
after(async () => { await target?.stop(); });

const bearer = (token) => ({ Authorization: `Bearer ${token}` });
/** Publish + subscribe on `path` (the backend's token) and subscribe only (a browser's). */
const writer = (path) => bearer(target.token({ publish: [path], subscribe: [path] }));
const reader = (path) => bearer(target.token({ subscribe: [path] }));
const events = (from, to) => Array.from({ length: to - from }, (_, i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `w${from + i} ` }));

/** Creates a JSON stream on node `node` and returns its handle and a producer on it. */
async function jsonStream(path, node = 0) {
  const handle = await DurableStream.create({ url: target.streamUrl(node, path), headers: writer(path), contentType: "application/json" });
  const errors = [];
  const producer = new IdempotentProducer(handle, `producer-${path}`, { lingerMs: 1, onError: (e) => errors.push(e) });
  return { handle, producer, errors };
}

/**
 * Reads with subscribeJson: `items` and `offsets` fill as batches come; `ended` resolves with the session once the
 * subscriber has had the batch that ends at the session's last offset. Not at `res.closed` alone: the client resolves
 * it when the session's last response is queued, before the subscriber has seen it, so a read whose first answer
 * was already the closed stream ended with no item (the CI of 2026-12-03, when the forwarded read's first answer
 * came after the closure; against the reference server too). Nor at a batch saying `streamClosed`: over SSE the
 * closure's own control event, after the last data, makes no batch.
 */
function readToEof(opts) {
  const items = [];
  const offsets = [];
  const ended = (async () => {
    const res = await stream({ json: true, ...opts });
    res.subscribeJson((batch) => {
      items.push(...batch.items);
      offsets.push(batch.offset);
    });
    await res.closed;
    await waitFor(() => offsets.at(-1) === res.offset, "the subscriber's batch at the session's last offset", 5_000);
    return { res, items, offsets };
  })();
  return { items, ended };
}

describe(`@durable-streams/client on ${SERVER}`, () => {
  for (const live of ["sse", "long-poll"]) {
    test(`stream({ live: '${live}' }) gets every message live, in order, and ends at the stream's closure (EOF)`, async () => {
      const path = uniquePath(`clients/${live}`);
      const { producer, errors } = await jsonStream(path);
      const first = events(0, 5);
      for (const e of first) producer.append(JSON.stringify(e));
      await producer.flush();
      // the browser reads from the other node of the cluster, from the start, and stays live
      const reading = readToEof({ url: target.streamUrl(1, path), headers: reader(path), offset: "-1", live });
      await waitFor(() => reading.items.length >= first.length, "the reader's catch-up"); // now it waits live
      const rest = events(5, 40);
      for (const e of rest) producer.append(JSON.stringify(e));
      const closed = await producer.close();
      assert.equal(typeof closed.finalOffset, "string");
      const { res, items, offsets } = await reading.ended;
      assert.deepEqual(errors, []);
      assert.deepEqual(items, [...first, ...rest]);
      assert.equal(res.streamClosed, true, "the session ended at EOF (the stream's closure), not at a cut connection");
      assert.equal(res.offset, closed.finalOffset, "it ended at the closing offset");
      assert.equal(offsets.at(-1), closed.finalOffset, "the last batch ends at the closing offset");
      assert.ok(offsets.every((o, i) => i === 0 || o >= offsets[i - 1]), "offsets never go back (they are ordered strings)");
    });
  }

  for (const live of ["sse", "long-poll"]) {
    test(`stream({ live: '${live}' }) opened after the closure gets the whole stream and EOF`, async () => {
      const path = uniquePath(`clients/after-${live}`);
      const { producer } = await jsonStream(path);
      for (const e of events(0, 40)) producer.append(JSON.stringify(e));
      const closed = await producer.close();
      const { res, items } = await readToEof({ url: target.streamUrl(1, path), headers: reader(path), offset: "-1", live }).ended;
      assert.deepEqual(items, events(0, 40));
      assert.equal(res.streamClosed, true);
      assert.equal(res.offset, closed.finalOffset);
    });
  }

  test("a reader resumes from a saved batch.offset with exactly what came after it", async () => {
    const path = uniquePath("clients/resume");
    const { producer } = await jsonStream(path);
    for (const e of events(0, 10)) producer.append(JSON.stringify(e));
    await producer.flush();
    // first visit: a catch-up read (live: false) saves the offset of what it saw
    const visit = await stream({ url: target.streamUrl(0, path), headers: reader(path), offset: "-1", live: false, json: true });
    const seen = await visit.json();
    const saved = visit.offset;
    assert.deepEqual(seen, events(0, 10));
    assert.equal(typeof saved, "string");
    // more is written while the browser is away; then it comes back, on the other node, from the saved offset
    for (const e of events(10, 25)) producer.append(JSON.stringify(e));
    await producer.flush();
    const reading = readToEof({ url: target.streamUrl(1, path), headers: reader(path), offset: saved, live: "sse" });
    await waitFor(() => reading.items.length >= 15, "the returning reader's catch-up");
    for (const e of events(25, 30)) producer.append(JSON.stringify(e));
    const { finalOffset } = await producer.close();
    const { items } = await reading.ended;
    assert.deepEqual(items, events(10, 30), "nothing lost, nothing seen twice");
    // a catch-up of the closed stream from its end: nothing more, and EOF at once
    const tail = await readToEof({ url: target.streamUrl(0, path), headers: reader(path), offset: finalOffset, live: "sse" }).ended;
    assert.deepEqual(tail.items, []);
    assert.equal(tail.res.streamClosed, true);
  });

  test("the IdempotentProducer's retried batch is stored once (Producer-Id / Epoch / Seq)", async () => {
    const path = uniquePath("clients/idempotent");
    const { handle, producer } = await jsonStream(path);
    producer.append(JSON.stringify({ n: 1 }));
    await producer.flush();
    // the same producer, epoch and sequence number sent again, as a retry after a lost answer would
    const url = target.streamUrl(0, path);
    const again = await fetch(url, {
      method: "POST",
      headers: { ...writer(path), "Content-Type": "application/json", "Producer-Id": `producer-${path}`, "Producer-Epoch": "0", "Producer-Seq": "0" },
      body: JSON.stringify({ n: 1 }),
    });
    assert.ok(again.status === 204 || again.status === 200, `a duplicate is acknowledged, not stored (status ${again.status})`);
    await producer.close();
    const all = await (await handle.stream({ offset: "-1", live: false, json: true })).json();
    assert.deepEqual(all, [{ n: 1 }]);
  });

  test("DurableStream.append and close(): a final message and EOF, bytes and text read back as written", async () => {
    const path = uniquePath("clients/text");
    const url = target.streamUrl(0, path);
    const handle = await DurableStream.create({ url, headers: writer(path), contentType: "text/plain" });
    await handle.append("héllo, ");
    await handle.append(new TextEncoder().encode("wörld"));
    await handle.close({ body: "!" });
    const res = await stream({ url: target.streamUrl(1, path), headers: reader(path), offset: "-1", live: "sse" });
    assert.equal(await res.text(), "héllo, wörld!");
    assert.equal(res.streamClosed, true);
    await assert.rejects(handle.append("more"), (err) => err.status === 409, "an append after the closure is refused (409)");
  });

  test("tokens: none is 401, another stream's is 403, a subscribe-only token cannot append", { skip: SERVER === "reference" ? "the reference server checks no token" : false }, async () => {
    const path = uniquePath("clients/auth");
    const url = target.streamUrl(0, path);
    await assert.rejects(DurableStream.create({ url, contentType: "application/json" }), (err) => err.status === 401);
    await assert.rejects(DurableStream.create({ url, headers: writer(`${path}-other`), contentType: "application/json" }), (err) => err.status === 403);
    const { handle } = await jsonStream(path);
    await handle.append(JSON.stringify({ ok: true }));
    const browser = new DurableStream({ url: target.streamUrl(1, path), headers: reader(path), contentType: "application/json" });
    await assert.rejects(browser.append(JSON.stringify({ forged: true })), (err) => err.status === 403);
    await assert.rejects(stream({ url: target.streamUrl(1, path), headers: reader(`${path}-other`), offset: "-1", live: false, json: true }), (err) => err.status === 403);
    const items = await (await stream({ url: target.streamUrl(1, path), headers: reader(path), offset: "-1", live: false, json: true })).json();
    assert.deepEqual(items, [{ ok: true }]);
  });
});
