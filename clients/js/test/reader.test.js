// readRun / followRun against the real server process.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  ForbiddenError,
  RunGoneError,
  RunNotFoundError,
  UnauthorizedError,
  followRun,
  memoryStorage,
  readRun,
} from "../src/index.js";
import {
  countingFetch,
  latch,
  mintToken,
  newRunId,
  publishAll,
  publishStreaming,
  startProxy,
  startServer,
  waitFor,
} from "./support.js";
import { workloadRun } from "./workload.js";

const RETRY_MS = 200;

describe("readRun against IQ-Stream", () => {
  /** @type {Awaited<ReturnType<typeof startServer>>} */
  let server;
  /** @type {Awaited<ReturnType<typeof startProxy>>} */
  let proxy;

  before(async () => {
    server = await startServer(["--retry", `${RETRY_MS}ms`, "--await-run", "2s"]);
    proxy = await startProxy(server.port);
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
  });

  const read = async (options) => {
    const items = [];
    for await (const item of readRun(options)) items.push(item);
    return items;
  };

  test("readsAFullRunInOrderWithIdsFromOne", async () => {
    const runId = newRunId();
    const events = workloadRun({ firstAnswerTokens: 20, toolArgFragments: 5, secondAnswerTokens: 20 });
    const reply = await publishAll(server, runId, events);
    assert.deepEqual(reply, { runId, lastEventId: events.length, ended: true });

    for (const transport of ["headers", "query"]) {
      const items = await read({ baseUrl: server.baseUrl, runId, token: server.token({ subscribe: [runId] }), transport });
      assert.deepEqual(items.map((i) => i.id), events.map((_, i) => i + 1), transport);
      assert.deepEqual(items.map((i) => i.event), events, transport);
    }
  });

  test("startsAfterLastEventIdAndEndsWith204WhenNothingIsLeft", async () => {
    const runId = newRunId();
    const events = workloadRun({ firstAnswerTokens: 10, toolArgFragments: 0, secondAnswerTokens: 0 });
    await publishAll(server, runId, events);
    const token = server.token({ subscribe: [runId] });

    for (const transport of ["headers", "query"]) {
      const tail = await read({ baseUrl: server.baseUrl, runId, token, transport, lastEventId: 5 });
      assert.deepEqual(tail.map((i) => i.id), events.slice(5).map((_, i) => i + 6), transport);
    }

    const fetchFn = countingFetch();
    const none = await read({ baseUrl: server.baseUrl, runId, token, lastEventId: events.length, fetch: fetchFn });
    assert.deepEqual(none, []);
    assert.equal(fetchFn.calls.length, 1, "204 ends the read without a reconnect");
  });

  test("reconnectsWithLastEventIdAfterACutMidAnswerWithNoGapOrDuplicate", async () => {
    const runId = newRunId();
    const events = workloadRun({ firstAnswerTokens: 60, toolArgFragments: 10, toolResultBytes: 2048, secondAnswerTokens: 60 });
    const fetchFn = countingFetch();
    const reconnects = [];
    const received = [];
    const cutAt = [40, 100];
    const resumeAt = latch();
    // Hold the publisher while the first cut happens, so the cut really falls mid-answer
    // and the reader must come back for events it has not seen yet.
    const publishing = publishStreaming(server, runId, events, {
      gapMs: 2,
      waitBefore: (i) => (i === 45 ? resumeAt.wait() : undefined),
    });
    for await (const item of readRun({
      baseUrl: proxy.baseUrl,
      runId,
      token: server.token({ subscribe: [runId] }),
      fetch: fetchFn,
      onReconnect: (info) => reconnects.push(info),
    })) {
      received.push(item);
      if (cutAt.includes(item.id)) {
        proxy.cut();
        if (item.id === 40) setTimeout(() => resumeAt.open(), 50);
      }
    }
    await publishing;

    assert.deepEqual(received.map((i) => i.id), events.map((_, i) => i + 1), "ids 1..N, no gap, no duplicate");
    assert.deepEqual(received.map((i) => i.event), events);
    assert.equal(received.filter((i) => i.event.type === "RUN_STARTED").length, 1);
    assert.ok(reconnects.length >= 2, `reconnected after each cut (${reconnects.length})`);
    // a cut loses at most what was already read off the socket in the same chunk
    assert.ok(reconnects[0].lastEventId >= 40 && reconnects[0].lastEventId <= 45, `first cut at ${reconnects[0].lastEventId}`);
    assert.ok(reconnects[1].lastEventId >= 100, `second cut at ${reconnects[1].lastEventId}`);
    // every request after the first resumed with Last-Event-ID = the last id handed on
    assert.equal(fetchFn.calls[0].headers["Last-Event-ID"], undefined);
    assert.deepEqual(
      fetchFn.calls.slice(1).map((c) => c.headers["Last-Event-ID"]),
      reconnects.map((r) => String(r.lastEventId)),
    );
    // honours the server's retry: (first reconnect after a drop waits ~RETRY_MS, +-10%)
    for (const r of reconnects.slice(0, 2)) {
      assert.ok(r.delayMs >= RETRY_MS * 0.9 - 1 && r.delayMs <= RETRY_MS * 1.1 + 1, `delay ${r.delayMs} ms ~ retry ${RETRY_MS}`);
    }
  });

  test("followRunContinuesAfterAReloadFromTheStoredCursor", async () => {
    const runId = newRunId();
    const events = workloadRun({ firstAnswerTokens: 30, toolArgFragments: 0, secondAnswerTokens: 0 });
    const storage = memoryStorage();
    const storageKey = "chat-1";
    const token = server.token({ subscribe: [runId] });
    const hold = latch();
    const publishing = publishStreaming(server, runId, events, { gapMs: 1, waitBefore: (i) => (i === 20 ? hold.wait() : undefined) });

    // "page 1": reads 12 events, then the page goes away
    const firstPage = [];
    for await (const item of followRun({ baseUrl: server.baseUrl, runId, token, storage, storageKey })) {
      firstPage.push(item.id);
      if (item.id === 12) break;
    }
    assert.deepEqual(JSON.parse(storage.getItem(storageKey)), { runId, lastEventId: 12, token });

    // "page 2": no run id given, only the storage
    hold.open();
    const secondPage = [];
    const fetchFn = countingFetch();
    for await (const item of followRun({ baseUrl: server.baseUrl, storage, storageKey, fetch: fetchFn })) secondPage.push(item.id);
    await publishing;

    assert.equal(fetchFn.calls[0].headers["Last-Event-ID"], "12");
    assert.deepEqual([...firstPage, ...secondPage], events.map((_, i) => i + 1));
    assert.equal(storage.getItem(storageKey), null, "the cursor is removed when the run ends");
  });

  test("surfacesEachRefusalAsATypedErrorWithoutRetrying", async () => {
    const runId = newRunId();
    await publishAll(server, runId, workloadRun({ firstAnswerTokens: 2, toolArgFragments: 0, secondAnswerTokens: 0 }));

    const cases = [
      { name: "no token", token: undefined, type: UnauthorizedError, status: 401, code: "unauthenticated" },
      { name: "bad signature", token: mintToken("x".repeat(40), { iqstream: { subscribe: ["*"] } }), type: UnauthorizedError, status: 401, code: "unauthenticated" },
      { name: "expired", token: server.token({ subscribe: [runId] }, { exp: Math.floor(Date.now() / 1000) - 3600 }), type: UnauthorizedError, status: 401, code: "unauthenticated" },
      { name: "other run", token: server.token({ subscribe: ["someone-else"] }), type: ForbiddenError, status: 403, code: "forbidden" },
      { name: "publish right only", token: server.token({ publish: [runId] }), type: ForbiddenError, status: 403, code: "forbidden" },
      { name: "no such run", runId: newRunId("missing"), token: server.token({ subscribe: ["*"] }), type: RunNotFoundError, status: 404, code: "not_found" },
    ];
    for (const c of cases) {
      const fetchFn = countingFetch();
      await assert.rejects(
        read({ baseUrl: server.baseUrl, runId: c.runId ?? runId, token: c.token, fetch: fetchFn }),
        (err) => {
          assert.ok(err instanceof c.type, `${c.name}: ${err}`);
          assert.equal(err.status, c.status, c.name);
          assert.equal(err.code, c.code, c.name);
          assert.equal(err.runId, c.runId ?? runId);
          return true;
        },
      );
      assert.equal(fetchFn.calls.length, 1, `${c.name}: not retried`);
    }
  });
});

describe("readRun after retention", () => {
  let server;
  before(async () => {
    server = await startServer(["--retention", "300ms", "--await-run", "1s"]);
  });
  after(async () => server?.stop());

  test("surfacesAnExpiredRunAs410RunGoneError", async () => {
    const runId = newRunId();
    await publishAll(server, runId, workloadRun({ firstAnswerTokens: 2, toolArgFragments: 0, secondAnswerTokens: 0 }));
    const token = server.token({ subscribe: [runId] });
    await waitFor(async () => {
      const r = await fetch(`${server.baseUrl}/v1/runs/${runId}/events`, { headers: { Authorization: `Bearer ${token}` } });
      await r.body?.cancel();
      return r.status === 410;
    }, 10_000, "the run to expire (410)");

    const fetchFn = countingFetch();
    const storage = memoryStorage();
    storage.setItem("k", JSON.stringify({ runId, lastEventId: 3 }));
    await assert.rejects(
      (async () => { for await (const _ of followRun({ baseUrl: server.baseUrl, token, storage, storageKey: "k", fetch: fetchFn })) { /* none */ } })(),
      (err) => err instanceof RunGoneError && err.status === 410 && err.code === "gone",
    );
    assert.equal(fetchFn.calls.length, 1, "410 is not retried");
    assert.equal(storage.getItem("k"), null, "a gone run is forgotten");
  });
});
