// TanStack AI's own server helpers (examples/chat.js: toServerSentEventsResponse and
// resumeServerSentEventsResponse with iqstreamStream) in two server processes, A and B, behind a load balancer,
// read by TanStack's own client (ChatClient with fetchServerSentEvents, what useChat runs).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ChatClient, fetchServerSentEvents } from "@tanstack/ai-client";
import { encodeOffset } from "../src/offset.js";
import { WORDS } from "./model.js";
import { recordingFetch, sseEvents, startBalancer, startInstance, startServer, waitFor } from "./support.js";

const LEASE_MS = 1000;
let iq;
let token;
let b;
const started = [];
before(async () => {
  iq = await startServer([]);
  token = iq.token({ publish: ["tsa.*"], subscribe: ["tsa.*"] });
  b = await instance();
});
after(async () => {
  for (const x of started) await x.close();
  await iq?.stop();
});

async function instance() {
  const x = await startInstance({ iqUrl: iq.baseUrl, token, env: { IQSTREAM_PUBLISHER_LEASE_MS: String(LEASE_MS) } });
  started.push(x);
  return x;
}

async function collect(iterable) {
  const out = [];
  for await (const item of iterable) out.push(item);
  return out;
}

const lines = (bodies) => bodies.flatMap((body) => body.split("\n").filter((l) => l.length > 0));
const textOf = (chunks) => chunks.filter((c) => c.type === "TEXT_MESSAGE_CONTENT").length;

/** A ChatClient (as useChat) on the balancer, its run held mid-answer on `producer`: { client, done, chunks, errors, rec, runId }. */
async function startHeldRun(producer, lb) {
  const rec = recordingFetch();
  const chunks = [];
  const errors = [];
  const client = new ChatClient({
    connection: fetchServerSentEvents(lb.url, { fetchClient: rec }),
    onChunk: (c) => chunks.push(c),
    onError: (e) => errors.push(e),
  });
  await producer.hold();
  const done = client.sendMessage("What does the Q3 report say?");
  await waitFor(() => textOf(chunks) >= 20, 20_000, "the first part of the answer");
  const runId = chunks.find((c) => c.type === "RUN_STARTED").runId;
  return { client, done, chunks, errors, rec, runId };
}

test("a run produced on A, cut mid-answer, resumes on B with Last-Event-ID; joinRun on B; every chunk once, in order, byte-equal", async () => {
  const a = await instance();
  const lb = await startBalancer(a.port);
  try {
    const run = await startHeldRun(a, lb);
    const iqRunId = `tsa.${run.runId}`;
    // a second client joins the run on B while it is open (a reload, another tab)
    const joinRec = recordingFetch();
    const joined = collect(fetchServerSentEvents(b.url, { fetchClient: joinRec }).joinRun(run.runId));

    lb.target = b.port; // A leaves the balancer; its producer goes on
    lb.cut();
    await a.open();
    await run.done;
    const joinedChunks = await joined;

    assert.deepEqual(run.errors, []);
    const produced = lines(await a.appends());
    assert.deepEqual(await b.appends(), [], "B produced nothing: it served the log");
    const n = produced.length;
    const ids = Array.from({ length: n }, (_, i) => encodeOffset(iqRunId, i + 1));

    // the client's two responses: A's up to the cut, then B's resume after the last id it had
    const [fresh, resumed, ...more] = run.rec.responses;
    assert.equal(more.length, 0);
    const freshEvents = sseEvents(fresh.text);
    const resumedEvents = sseEvents(resumed.text);
    assert.ok(freshEvents.length > 0 && freshEvents.length < n, `cut mid-answer: ${freshEvents.length} of ${n}`);
    assert.equal(fresh.lastEventId, null);
    assert.equal(resumed.lastEventId, freshEvents.at(-1).id);
    assert.deepEqual((await b.requests()).filter((r) => r.method === "POST").map((r) => r.lastEventId), [resumed.lastEventId]);
    assert.deepEqual((await a.requests()).map((r) => r.lastEventId), [null]);
    const received = [...freshEvents, ...resumedEvents];
    assert.deepEqual(received.map((e) => e.id), ids, "each chunk once, in order");
    assert.equal(run.chunks.length, n);

    // joinRun on B: the whole run; its bytes are the client's, and A's own for the part A sent
    const joinedEvents = sseEvents(joinRec.responses[0].text);
    assert.deepEqual(joinedEvents, received);
    assert.deepEqual(joinedEvents.slice(0, freshEvents.length), freshEvents, "B's replay is byte-equal to what A sent");
    assert.equal(joinedChunks.length, n);
    assert.deepEqual(joinedChunks.map((c) => c.type), run.chunks.map((c) => c.type));
    assert.ok(run.chunks.some((c) => c.type === "RUN_FINISHED" && c.metadata?.tanstack?.finishReason === "tool_calls"),
      "the run has chat()'s intermediate RUN_FINISHED (tool turn) and goes on after it");

    const answer = run.client.getMessages().at(-1);
    assert.equal(answer.role, "assistant");
    assert.equal(answer.parts.filter((p) => p.type === "text").map((p) => p.content).join(""), WORDS.join(""));
  } finally {
    await lb.close();
  }
});

test("the producer SIGKILLed mid-answer: readers on B end with RUN_ERROR PUBLISHER_LOST within seconds, and TanStack's client reports it", async () => {
  const a = await instance();
  const lb = await startBalancer(a.port);
  try {
    const run = await startHeldRun(a, lb);
    const joined = collect(fetchServerSentEvents(b.url).joinRun(run.runId));
    await new Promise((r) => setTimeout(r, 3 * LEASE_MS)); // longer than the lease: the keep-alive holds the run
    const killedAt = Date.now();
    await a.kill();
    lb.target = b.port;
    lb.cut();
    const joinedChunks = await joined;
    const endedAfterMs = Date.now() - killedAt;
    await run.done;

    const last = joinedChunks.at(-1);
    assert.equal(last.type, "RUN_ERROR");
    assert.equal(last.code, "PUBLISHER_LOST");
    assert.equal(joinedChunks.filter((c) => c.type === "RUN_ERROR").length, 1);
    assert.ok(joinedChunks.length > 20, "it had the answer up to the kill");
    // within the lease × 1.5 + 1 s (TANSTACK-AI.md: 0.7–1.0 s measured with a 1 s lease), not --run-idle-timeout
    // (5 min): a dead producer does not hang its readers, and a lease applied four times late fails
    console.log(`PUBLISHER_LOST reached the reader on B ${endedAfterMs} ms after the SIGKILL (lease ${LEASE_MS} ms, bound ${LEASE_MS * 1.5 + 1000} ms)`);
    assert.ok(endedAfterMs <= LEASE_MS * 1.5 + 1000, `ended ${endedAfterMs} ms after the kill, past the lease × 1.5 + 1 s`);
    assert.equal(run.chunks.at(-1).type, "RUN_ERROR", "the client resumed on B and got the end");
    assert.equal(run.errors.length, 1);
    assert.match(run.errors[0].message, /publisher lost/);
  } finally {
    await lb.close();
  }
});
