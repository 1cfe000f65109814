// readRun against a hostile server: a tiny HTTP server on loopback that answers with crafted SSE (a repeated
// id, an id that skips ahead, within one connection or on the reconnect). The thing under test is the client:
// it must hand on every event before the fault, then fail with StreamIntegrityError naming the fault, and
// never hide a duplicate by dropping it.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { StreamIntegrityError, readRun } from "../src/index.js";

const frame = (id, event) => `id: ${id}\ndata: ${JSON.stringify(event)}\n\n`;
const text = (n) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: `d${n}` });
const started = { type: "RUN_STARTED", threadId: "t", runId: "r" };

/**
 * Starts a server that answers the n-th GET of /v1/runs/r/events with script[n] (an array of [id, event]
 * frames, written then the response is ended), and records each request's Last-Event-ID.
 * @param {Array<Array<[number, object]>>} script
 */
async function hostileServer(script) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const n = requests.length;
    requests.push({ url: req.url, lastEventId: req.headers["last-event-id"] });
    const frames = script[Math.min(n, script.length - 1)];
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
    res.write("retry: 10\n\n");
    for (const [id, event] of frames) res.write(frame(id, event));
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Reads the run "r" until it ends or fails; returns the ids handed on and the error, if any. */
async function readAll(baseUrl) {
  const ids = [];
  try {
    for await (const item of readRun({ baseUrl, runId: "r", maxAttempts: 3, initialDelayMs: 10 })) ids.push(item.id);
    return { ids, error: undefined };
  } catch (error) {
    return { ids, error };
  }
}

describe("readRun against a server that breaks the id sequence", () => {
  const servers = [];
  const start = async (script) => {
    const s = await hostileServer(script);
    servers.push(s);
    return s;
  };
  after(async () => {
    for (const s of servers) await s.close();
  });

  test("aDuplicateInOneResponseIsReportedNotDropped", async () => {
    const s = await start([[[1, started], [2, text(2)], [2, text(2)], [3, text(3)], [4, { type: "RUN_FINISHED" }]]]);
    const { ids, error } = await readAll(s.baseUrl);
    assert.deepEqual(ids, [1, 2], "the events before the duplicate are handed on, none after it");
    assert.ok(error instanceof StreamIntegrityError, `a StreamIntegrityError, got ${error}`);
    assert.equal(error.code, "duplicate_event");
    assert.equal(error.expectedId, 3);
    assert.equal(error.receivedId, 2);
    assert.equal(error.runId, "r");
    assert.equal(s.requests.length, 1, "a server fault is not retried");
  });

  test("aDuplicateOnTheResumeIsReportedNotDropped", async () => {
    // the first response drops after event 2; the resume (Last-Event-ID: 2) repeats event 2
    const s = await start([
      [[1, started], [2, text(2)]],
      [[2, text(2)], [3, text(3)], [4, { type: "RUN_FINISHED" }]],
    ]);
    const { ids, error } = await readAll(s.baseUrl);
    assert.deepEqual(s.requests.map((r) => r.lastEventId), [undefined, "2"], "resumed after the last id handed on");
    assert.deepEqual(ids, [1, 2]);
    assert.ok(error instanceof StreamIntegrityError, `a StreamIntegrityError, got ${error}`);
    assert.deepEqual([error.code, error.expectedId, error.receivedId], ["duplicate_event", 3, 2]);
  });

  test("aGapInOneResponseFailsTheRead", async () => {
    const s = await start([[[1, started], [2, text(2)], [4, text(4)], [5, { type: "RUN_FINISHED" }]]]);
    const { ids, error } = await readAll(s.baseUrl);
    assert.deepEqual(ids, [1, 2]);
    assert.ok(error instanceof StreamIntegrityError, `a StreamIntegrityError, got ${error}`);
    assert.deepEqual([error.code, error.expectedId, error.receivedId], ["event_gap", 3, 4]);
    assert.equal(s.requests.length, 1);
  });

  test("aGapOnTheResumeFailsTheRead", async () => {
    const s = await start([
      [[1, started], [2, text(2)]],
      [[5, text(5)], [6, { type: "RUN_FINISHED" }]],
    ]);
    const { ids, error } = await readAll(s.baseUrl);
    assert.deepEqual(s.requests.map((r) => r.lastEventId), [undefined, "2"]);
    assert.deepEqual(ids, [1, 2]);
    assert.ok(error instanceof StreamIntegrityError, `a StreamIntegrityError, got ${error}`);
    assert.deepEqual([error.code, error.expectedId, error.receivedId], ["event_gap", 3, 5]);
  });

  test("anUnbrokenSequenceAcrossAResumeReadsToTheEnd", async () => {
    // the control: the same hostile server, sending what the contract says, is read to the end
    const s = await start([
      [[1, started], [2, text(2)]],
      [[3, text(3)], [4, { type: "RUN_FINISHED" }]],
    ]);
    const { ids, error } = await readAll(s.baseUrl);
    assert.equal(error, undefined);
    assert.deepEqual(ids, [1, 2, 3, 4]);
    assert.deepEqual(s.requests.map((r) => r.lastEventId), [undefined, "2"]);
  });
});
