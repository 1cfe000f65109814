// iqstreamStream's own behaviour on a real IQ-Stream server: what the run looks like in IQ-Stream, the lease,
// close, upsert against the stored log, refusals, and TanStack's producer path with a failing stream.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { after, before, test } from "node:test";
import { replayRunStream, resumeHttpResponse, toHttpResponse, toServerSentEventsResponse } from "@tanstack/ai";
import { IqStreamDurabilityError, iqstreamStream } from "../src/index.js";
import { encodeOffset } from "../src/offset.js";
import { startServer } from "./support.js";

let iq;
let token;
before(async () => {
  iq = await startServer([]);
  token = iq.token({ publish: ["tsa.*"], subscribe: ["tsa.*"] });
});
after(() => iq?.stop());

const newRun = () => `a-${randomBytes(5).toString("hex")}`;
const chunk = (i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `w${i} `, timestamp: 1000 + i });
const finished = { type: "RUN_FINISHED", runId: "r", threadId: "t", timestamp: 2000 };
const open = (runId, options = {}) => iqstreamStream({ runId }, { url: iq.baseUrl, token, ...options });

async function status(iqRunId) {
  const r = await fetch(`${iq.baseUrl}/v1/runs/${iqRunId}`, { headers: { Authorization: `Bearer ${token}` } });
  return r.status === 200 ? r.json() : { status: r.status };
}
async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

test("the TanStack run is one IQ-Stream run, tsa.<runId>, whose event ids are the offsets", async () => {
  const runId = newRun();
  const d = open(runId);
  assert.equal(d.iqRunId, `tsa.${runId}`);
  const offsets = await d.append([chunk(1), chunk(2)]);
  assert.deepEqual(offsets, [encodeOffset(d.iqRunId, 1), encodeOffset(d.iqRunId, 2)]);
  const s = await status(d.iqRunId);
  assert.equal(s.lastEventId, 2);
  assert.equal(s.ended, false);
  await d.append([finished]);
  assert.equal((await status(d.iqRunId)).ended, true);
  await d.close();
  assert.equal((await status(d.iqRunId)).events, 3, "close after the terminal chunk adds nothing");
});

test("between batches the keep-alive holds the run past its lease (the SIGKILL case is in instances.test.js)", async () => {
  const runId = newRun();
  // a 1 s lease (a keep-alive every third of it): a 300 ms one left a loaded 2-CPU machine 100 ms of slack
  const d = open(runId, { leaseMs: 1000 });
  await d.append([chunk(1)]);
  await new Promise((r) => setTimeout(r, 3500)); // 3.5 leases with no batch: without keep-alive, PUBLISHER_LOST
  assert.equal((await status(d.iqRunId)).ended, false);
  assert.deepEqual(await d.append([chunk(2), finished]), [2, 3].map((id) => encodeOffset(d.iqRunId, id)));
  await d.close();
  assert.deepEqual((await collect(open(runId).read("-1"))).map((e) => e.chunk), [chunk(1), chunk(2), finished]);
});

test("close() on a run with no terminal chunk ends it with a RUN_FINISHED that TanStack's readers do not see", async () => {
  const runId = newRun();
  const d = open(runId);
  await d.append([{ type: "RUN_STARTED", threadId: "t-9", runId }, chunk(1)]);
  const reading = collect(open(runId).read("-1"));
  await d.close();
  assert.deepEqual((await reading).map((e) => e.chunk.type), ["RUN_STARTED", "TEXT_MESSAGE_CONTENT"]);
  assert.deepEqual((await open(runId).snapshot()).map((e) => e.chunk.type), ["RUN_STARTED", "TEXT_MESSAGE_CONTENT"]);
  const s = await status(d.iqRunId);
  assert.equal(s.ended, true);
  assert.equal(s.events, 3);
  // what an AG-UI reader of the IQ-Stream run sees: the run finished, with its ids
  const raw = await (await fetch(`${iq.baseUrl}/v1/runs/${d.iqRunId}/events`, { headers: { Authorization: `Bearer ${token}` } })).text();
  const last = JSON.parse(raw.trim().split("\n").at(-1).slice("data: ".length));
  assert.deepEqual(last, { type: "RUN_FINISHED", threadId: "t-9", runId, result: { "iqstream.closed": true } });
  await d.close(); // again: nothing to do
  assert.equal((await status(d.iqRunId)).events, 3);
});

test("upsert: the same range twice adds nothing; new entries right after the tail are appended", async () => {
  const runId = newRun();
  const d = open(runId);
  const offsets = await d.append([chunk(1), chunk(2), chunk(3)]);
  const next = [4, 5].map((id) => encodeOffset(d.iqRunId, id));
  const entries = [
    { chunk: chunk(2), offset: offsets[1] },
    { chunk: chunk(3), offset: offsets[2] },
    { chunk: chunk(4), offset: next[0] },
    { chunk: chunk(5), offset: next[1] },
  ];
  assert.deepEqual(await d.upsert(entries), [offsets[1], offsets[2], ...next]);
  assert.equal((await status(d.iqRunId)).events, 5);
  assert.deepEqual(await d.upsert(entries), [offsets[1], offsets[2], ...next]);
  assert.equal((await status(d.iqRunId)).events, 5, "an identical overlapping range adds nothing");
  assert.deepEqual((await d.snapshot()).map((e) => e.chunk), [1, 2, 3, 4, 5].map(chunk));
  // a producer re-deriving its offsets after a crash continues with upsert from a new process
  const resumed = open(runId);
  await resumed.upsert([{ chunk: chunk(5), offset: next[1] }, { chunk: finished, offset: encodeOffset(d.iqRunId, 6) }]);
  assert.equal((await status(d.iqRunId)).ended, true);
});

test("upsert refuses a different chunk at a stored offset and a new offset past the tail, storing nothing", async () => {
  const runId = newRun();
  const d = open(runId);
  const offsets = await d.append([chunk(1), chunk(2)]);
  const refused = (err) => err instanceof IqStreamDurabilityError;
  await assert.rejects(d.upsert([{ chunk: chunk(3), offset: encodeOffset(d.iqRunId, 3) }, { chunk: chunk(9), offset: offsets[1] }]),
    (err) => refused(err) && /append-only/.test(err.message));
  await assert.rejects(d.upsert([{ chunk: chunk(4), offset: encodeOffset(d.iqRunId, 4) }]), (err) => refused(err) && /hole/.test(err.message));
  assert.equal((await status(d.iqRunId)).events, 2);
  await d.append([finished]);
});

test("a second producer for a run that exists is refused 409 event_id_mismatch; a token without publish, 403", async () => {
  const runId = newRun();
  const first = open(runId);
  await first.append([chunk(1)]);
  const second = open(runId);
  await assert.rejects(second.append([chunk(1)]), (err) => err instanceof IqStreamDurabilityError
    && err.status === 409 && err.code === "event_id_mismatch" && err.lastEventId === 1);
  const readOnly = iqstreamStream({ runId: newRun() }, { url: iq.baseUrl, token: iq.token({ subscribe: ["tsa.*"] }) });
  await assert.rejects(readOnly.append([chunk(1)]), (err) => err.status === 403 && err.code === "forbidden");
  await first.append([finished]);
  assert.deepEqual(await collect(replayRunStream(open(runId))), [chunk(1), finished]);
});

test("a producer stream that throws: TanStack appends its RUN_ERROR through the adapter and closes it", async () => {
  const runId = newRun();
  async function* failing() {
    yield chunk(1);
    throw new Error("model exploded");
  }
  const response = toServerSentEventsResponse(failing(), { durability: { adapter: open(runId) } });
  await response.text();
  const stored = (await open(runId).snapshot()).map((e) => e.chunk);
  assert.deepEqual(stored.map((c) => c.type), ["CUSTOM", "TEXT_MESSAGE_CONTENT", "RUN_ERROR"]);
  assert.match(stored[2].message, /model exploded/);
  assert.equal((await status(`tsa.${runId}`)).ended, true);
});

/** A TCP proxy to IQ-Stream that, once armed, drops the next answer it would pass back (and the connection). */
async function answerDroppingProxy(port) {
  const proxy = { armed: false, dropped: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    client.pipe(upstream);
    upstream.on("data", (data) => {
      if (proxy.armed) {
        proxy.armed = false;
        proxy.dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(data);
    });
    const close = () => { client.destroy(); upstream.destroy(); };
    for (const s of [client, upstream]) { s.on("error", close); s.on("close", close); }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  proxy.url = `http://127.0.0.1:${server.address().port}`;
  proxy.close = () => new Promise((r) => { server.close(r); server.closeAllConnections?.(); });
  return proxy;
}

test("a batch whose answer is lost on the network is sent again with the same Last-Event-ID: stored once, nothing lost", async () => {
  const proxy = await answerDroppingProxy(iq.port);
  try {
    const runId = newRun();
    const d = iqstreamStream({ runId }, { url: proxy.url, token });
    await d.append([chunk(1)]);
    proxy.armed = true; // IQ-Stream appends the batch, its answer never arrives
    const offsets = await d.append([chunk(2), chunk(3)]);
    assert.equal(proxy.dropped, 1);
    assert.deepEqual(offsets, [2, 3].map((id) => encodeOffset(d.iqRunId, id)));
    assert.deepEqual(await d.append([finished]), [encodeOffset(d.iqRunId, 4)]);
    assert.deepEqual((await open(runId).snapshot()).map((e) => e.chunk), [chunk(1), chunk(2), chunk(3), finished]);
  } finally {
    await proxy.close();
  }
});

test("the keep-alive lets a producer go after maxPauseMs without a batch: the lease then ends its run", async () => {
  const runId = newRun();
  const d = open(runId, { leaseMs: 300, maxPauseMs: 500 });
  await d.append([chunk(1)]);
  const chunks = (await collect(open(runId).read("-1"))).map((e) => e.chunk);
  assert.equal(chunks.at(-1).code, "PUBLISHER_LOST");
  await d.close(); // the run ended: nothing to do
});

test("toHttpResponse / resumeHttpResponse (NDJSON envelopes) take the adapter the same way: a resume is the rest, byte-equal", async () => {
  const runId = newRun();
  async function* produced() {
    yield { type: "RUN_STARTED", threadId: "t", runId };
    for (let i = 1; i <= 5; i++) yield chunk(i);
    yield { type: "RUN_FINISHED", threadId: "t", runId };
  }
  const request = new Request("http://app/api/chat", { method: "POST", headers: { "X-Run-Id": runId } });
  const fresh = (await toHttpResponse(produced(), { durability: { adapter: iqstreamStream(request, { url: iq.baseUrl, token }) } }).text())
    .split("\n").filter(Boolean);
  assert.equal(fresh.length, 8); // run.accepted + 7
  const third = JSON.parse(fresh[2]).id;
  const again = new Request("http://app/api/chat", { headers: { "Last-Event-ID": third } });
  const resumed = (await resumeHttpResponse({ adapter: iqstreamStream(again, { url: iq.baseUrl, token }) }).text()).split("\n").filter(Boolean);
  assert.deepEqual(resumed, fresh.slice(3));
});

test("the address is required (option or IQSTREAM_URL), and a bad lease is refused at once", () => {
  const saved = process.env.IQSTREAM_URL;
  delete process.env.IQSTREAM_URL;
  try {
    assert.throws(() => iqstreamStream({ runId: "r" }), /IQSTREAM_URL/);
  } finally {
    if (saved !== undefined) process.env.IQSTREAM_URL = saved;
  }
  assert.throws(() => iqstreamStream({ runId: "r" }, { url: iq.baseUrl, leaseMs: -1 }), /leaseMs/);
});
