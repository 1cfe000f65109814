// TanStack AI's StreamDurability contract (@tanstack/ai 0.58, dist/esm/stream-durability.d.ts), each case run
// against memoryStream (TanStack's own adapter, the reference) and iqstreamStream on a real IQ-Stream server.
// @tanstack/ai ships no conformance suite for durability adapters; these are the contract's MUSTs as written
// in its declarations.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { memoryStream } from "@tanstack/ai";
import { iqstreamStream } from "../src/index.js";
import { startServer } from "./support.js";

let iq;
let token;
before(async () => {
  iq = await startServer([]);
  token = iq.token({ publish: ["tsa.*"], subscribe: ["tsa.*"] });
});
after(() => iq?.stop());

const adapters = {
  memoryStream: (source) => memoryStream(source),
  iqstreamStream: (source) => iqstreamStream(source, { url: iq.baseUrl, token }),
};

const newRun = () => `c-${randomBytes(5).toString("hex")}`;
const chunk = (i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `w${i} `, timestamp: 1000 + i });
const finished = (runId) => ({ type: "RUN_FINISHED", runId, threadId: "t", timestamp: 2000 });
const strip = (entries) => entries.map((e) => e.chunk);

/** `promise`, or a rejection after `ms` (a call that must not wait). */
export function within(ms, promise, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms); })])
    .finally(() => clearTimeout(timer));
}

async function collect(iterable, limit = Infinity) {
  const out = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

for (const [name, make] of Object.entries(adapters)) {
  describe(name, { timeout: 60_000 }, () => {
    test("append returns one unique offset per chunk, in order, each a valid SSE id", async () => {
      const runId = newRun();
      const d = make({ runId });
      assert.equal(d.resumeFrom(), null);
      const first = await d.append([chunk(1), chunk(2), chunk(3)]);
      const second = await d.append([chunk(4)]);
      const offsets = [...first, ...second];
      assert.equal(offsets.length, 4);
      assert.equal(new Set(offsets).size, 4);
      for (const o of offsets) {
        assert.ok(o.length > 0 && o === o.trim() && !/[\r\n\0]/.test(o), o);
      }
      await d.append([finished(runId)]);
      await d.close();
    });

    test("read(offset) replays strictly after the offset and tails until the log is closed", async () => {
      const runId = newRun();
      const producer = make({ runId });
      const offsets = await producer.append([chunk(1), chunk(2), chunk(3)]);
      const reader = make({ runId, offset: offsets[0] });
      assert.equal(reader.resumeFrom(), offsets[0]);
      const reading = collect(reader.read(offsets[0]));
      await new Promise((r) => setTimeout(r, 50));
      const later = await producer.append([chunk(4), finished(runId)]);
      await producer.close();
      const got = await reading;
      assert.deepEqual(got.map((e) => e.offset), [offsets[1], offsets[2], ...later]);
      assert.deepEqual(strip(got), [chunk(2), chunk(3), chunk(4), finished(runId)]);
    });

    test("close() with no terminal chunk unblocks readers and adds no chunk", async () => {
      const runId = newRun();
      const producer = make({ runId });
      await producer.append([chunk(1)]);
      const reading = collect(make({ runId }).read("-1"));
      await new Promise((r) => setTimeout(r, 50));
      await producer.close();
      assert.deepEqual(strip(await reading), [chunk(1)]);
      assert.deepEqual(strip(await producer.snapshot()), [chunk(1)]);
    });

    test("read('-1') is the whole log from its start", async () => {
      const runId = newRun();
      const producer = make({ runId });
      const offsets = await producer.append([chunk(1), chunk(2), finished(runId)]);
      await producer.close();
      const got = await collect(make({ runId }).read("-1"));
      assert.deepEqual(got.map((e) => e.offset), offsets);
      assert.deepEqual(strip(got), [chunk(1), chunk(2), finished(runId)]);
    });

    test("a read stops when its signal aborts", async () => {
      const runId = newRun();
      const producer = make({ runId });
      await producer.append([chunk(1)]);
      const controller = new AbortController();
      const got = [];
      const reading = (async () => {
        for await (const e of make({ runId }).read("-1", controller.signal)) got.push(e);
      })();
      await new Promise((r) => setTimeout(r, 100));
      controller.abort();
      await reading;
      assert.deepEqual(strip(got), [chunk(1)]);
      await producer.append([finished(runId)]);
      await producer.close();
    });

    test("snapshot is what is stored now, never waits on an open log, and is a fresh array", async () => {
      const runId = newRun();
      const producer = make({ runId });
      assert.deepEqual(await producer.snapshot(), []);
      const offsets = await producer.append([chunk(1), chunk(2)]);
      const snap = await within(3000, make({ runId }).snapshot(), "snapshot of an open log"); // a read would wait here
      assert.deepEqual(snap.map((e) => e.offset), offsets);
      assert.deepEqual(strip(snap), [chunk(1), chunk(2)]);
      snap.pop();
      assert.equal((await producer.snapshot()).length, 2);
      await producer.append([finished(runId)]);
      await producer.close();
      assert.equal((await producer.snapshot()).length, 3);
    });

    test("a request's Last-Event-ID, else ?offset, is the resume offset, and names the run", async () => {
      const runId = newRun();
      const producer = make({ runId });
      const offsets = await producer.append([chunk(1), chunk(2), finished(runId)]);
      await producer.close();
      const byHeader = make(new Request("http://app/api/chat", { method: "POST", headers: { "Last-Event-ID": offsets[0] } }));
      assert.equal(byHeader.resumeFrom(), offsets[0]);
      assert.deepEqual(strip(await collect(byHeader.read(offsets[0]))), [chunk(2), finished(runId)]);
      const byQuery = make(new Request(`http://app/api/chat?offset=-1&runId=${runId}`));
      assert.equal(byQuery.resumeFrom(), "-1");
      assert.equal((await collect(byQuery.read("-1"))).length, 3);
      assert.equal(make(new Request("http://app/api/chat", { method: "POST", headers: { "X-Run-Id": runId } })).resumeFrom(), null);
    });

    test("upsert: an identical overlapping range adds nothing", async () => {
      const runId = newRun();
      const d = make({ runId });
      const offsets = await d.append([chunk(1), chunk(2), chunk(3)]);
      const again = await d.upsert([{ chunk: chunk(2), offset: offsets[1] }, { chunk: chunk(3), offset: offsets[2] }]);
      assert.deepEqual(again, [offsets[1], offsets[2]]);
      assert.deepEqual(strip(await d.snapshot()), [chunk(1), chunk(2), chunk(3)]);
      await d.append([finished(runId)]);
      await d.close();
    });

    test("upsert refuses a hole, a repeated offset and another run's offset, and then stores nothing", async () => {
      const runId = newRun();
      const d = make({ runId });
      const offsets = await d.append([chunk(1), chunk(2)]);
      const other = make({ runId: newRun() });
      const foreign = await other.append([chunk(9)]);
      const sparse = [{ chunk: chunk(1), offset: offsets[0] }];
      sparse.length = 2; // entries[1] is a hole
      await assert.rejects(d.upsert(sparse));
      await assert.rejects(d.upsert([{ chunk: chunk(1), offset: offsets[0] }, { chunk: chunk(1), offset: offsets[0] }]));
      await assert.rejects(d.upsert([{ chunk: chunk(2), offset: offsets[1] }, { chunk: chunk(9), offset: foreign[0] }]));
      assert.deepEqual(strip(await d.snapshot()), [chunk(1), chunk(2)]);
      for (const [x, r] of [[d, runId], [other, null]]) {
        await x.append([finished(r ?? "other")]);
        await x.close();
      }
    });
  });
}
