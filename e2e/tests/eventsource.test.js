// The browser's own EventSource (no library) reading a run through a proxy that cuts the connection
// mid-answer: the browser reconnects by itself with Last-Event-ID, receives every event exactly once,
// and stops for good after the run ends (the relay answers its last reconnect with 204).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { startServer, randomSecret } from "../lib/server.js";
import { mintToken } from "../lib/jwt.js";
import { startCuttingProxy } from "../lib/proxy.js";
import { startStaticServer } from "../lib/static-server.js";
import { openPublisher } from "../lib/publisher.js";
import { launchChromium } from "../lib/browser.js";
import { waitFor } from "../lib/wait.js";

const RETRY_MS = 500;

// The page an app would have: a bare EventSource, recording what it sees.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>EventSource</title></head>
<body><script>
  const src = new URLSearchParams(location.search).get("src");
  window.received = [];
  window.opens = 0;
  window.errors = [];
  const es = new EventSource(src);
  window.es = es;
  es.onopen = () => { window.opens++; };
  es.onmessage = (m) => { window.received.push({ id: m.lastEventId, data: m.data }); };
  es.onerror = () => { window.errors.push({ at: Date.now(), readyState: es.readyState }); };
</script></body></html>`;

/** A short AG-UI run; some deltas carry characters SSE framing must survive. */
function agUiRun(runId, contentEvents) {
  const threadId = randomUUID();
  const messageId = randomUUID();
  const at = () => Date.now();
  const tricky = ["Hello", " wörld", " 🚀", " \"quoted\"", " line\nbreak", "\n\ndata: not-an-event", " \r\n", " id: 99", " ok"];
  const events = [{ type: "RUN_STARTED", threadId, runId, timestamp: at() }];
  events.push({ type: "TEXT_MESSAGE_START", messageId, role: "assistant", timestamp: at() });
  for (let i = 0; i < contentEvents; i++) {
    events.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: tricky[i % tricky.length] + i, timestamp: at() });
  }
  events.push({ type: "TEXT_MESSAGE_END", messageId, timestamp: at() });
  events.push({ type: "RUN_FINISHED", threadId, runId, timestamp: at() });
  return events;
}

let relay;
let proxy;
let site;
let chromium;
const secret = randomSecret();

before(async () => {
  site = await startStaticServer({ "/es.html": PAGE });
  relay = await startServer(["--jwt-secret", secret, "--cors-origin", site.origin, "--retry", `${RETRY_MS}ms`,
    "--retry-jitter", "0"]);
  proxy = await startCuttingProxy(relay.port);
  chromium = await launchChromium();
});

after(async () => {
  await chromium?.close();
  await proxy?.close();
  await site?.close();
  await relay?.stop();
});

test("EventSource resumes a cut stream with Last-Event-ID, without gap or duplicate, and stops after the run ends", async (t) => {
  const runId = `e2e-es-${randomUUID()}`;
  const events = agUiRun(runId, 60); // 64 events
  const total = events.length;
  const cutAfter = 20;
  const publishedWhileAway = 20;

  const subscribeToken = mintToken(secret, { subscribe: [runId] });
  const publishToken = mintToken(secret, { publish: [runId] });
  const src = `http://127.0.0.1:${proxy.port}/v1/runs/${runId}/events?access_token=${encodeURIComponent(subscribeToken)}`;

  const page = await chromium.context.newPage();
  const consoleErrors = [];
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  page.on("pageerror", (e) => consoleErrors.push(String(e)));

  const publisher = openPublisher(relay.baseUrl, runId, publishToken);
  for (const event of events.slice(0, cutAfter)) publisher.send(event);
  await page.goto(`${site.origin}/es.html?src=${encodeURIComponent(src)}`);

  const received = () => page.evaluate(() => window.received.length);
  await waitFor(async () => (await received()) >= cutAfter, { describe: async () => `${cutAfter} events (have ${await received()})` });

  // The network drops mid-answer; the backend keeps writing.
  assert.ok(proxy.cutAll() >= 1, "a connection was open to cut");
  for (const event of events.slice(cutAfter, cutAfter + publishedWhileAway)) publisher.send(event);

  // The browser reconnects by itself, saying where it was.
  const streamRequests = () => proxy.exchanges.filter((e) => e.method === "GET" && e.path.startsWith(`/v1/runs/${runId}/events`));
  await waitFor(() => streamRequests().length >= 2, { describe: () => `a reconnect (requests: ${JSON.stringify(streamRequests())})` });
  const [first, second] = streamRequests();
  assert.equal(first.headers["last-event-id"], undefined, "the first request starts at the beginning");
  assert.equal(second.headers["last-event-id"], String(cutAfter), "the reconnect names the last event received");
  await waitFor(() => second.status, { describe: () => "the reconnect's response" });
  assert.equal(second.status, 200);

  // The rest of the run, live.
  await waitFor(async () => (await received()) >= cutAfter + publishedWhileAway, { describe: async () => `the replay (have ${await received()})` });
  for (const event of events.slice(cutAfter + publishedWhileAway)) publisher.send(event);
  const reply = await publisher.end();
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.deepEqual(reply.body, { runId, lastEventId: total, ended: true });

  await waitFor(async () => (await received()) >= total, { timeoutMs: 10_000, describe: async () => `${total} events (have ${await received()})` });

  // After the terminal event the relay ends the response; the browser tries once more with the last id
  // and gets 204, which stops EventSource for good.
  await waitFor(() => streamRequests().some((e) => e.headers["last-event-id"] === String(total) && e.status !== undefined), {
    timeoutMs: 5_000 + 3 * RETRY_MS,
    describe: () => `the reconnect after the run ended (requests: ${JSON.stringify(streamRequests().map(({ headers, status }) => ({ lastEventId: headers["last-event-id"], status })))})`,
  });
  const finalRequest = streamRequests().find((e) => e.headers["last-event-id"] === String(total));
  assert.equal(finalRequest.status, 204, "the reconnect after the terminal event gets 204 No Content");
  await waitFor(() => page.evaluate(() => window.es.readyState === EventSource.CLOSED), { describe: () => "EventSource closed" });
  const requestsAtEnd = streamRequests().length;
  // Nothing else may come: give the browser several retry intervals to (wrongly) try again.
  await new Promise((resolve) => setTimeout(resolve, 4 * RETRY_MS));
  assert.equal(streamRequests().length, requestsAtEnd, "no reconnect after 204");
  assert.equal(await page.evaluate(() => window.es.readyState), 2, "EventSource stays CLOSED");

  // Every event exactly once, in order, as published.
  const got = await page.evaluate(() => window.received);
  assert.deepEqual(got.map((m) => m.id), events.map((_, i) => String(i + 1)), "ids 1..N: no gap, no duplicate");
  for (let i = 0; i < total; i++) {
    assert.deepEqual(JSON.parse(got[i].data), events[i], `event ${i + 1} arrives as published`);
  }
  assert.equal(streamRequests().length, 3, "one connect, one reconnect after the cut, one final 204");
  assert.ok(await page.evaluate(() => window.opens) >= 2, "the stream was opened twice");
  // The cut itself may be logged as a network error (net::ERR_...); anything else is a failure (a CORS
  // refusal of a reconnect or of the final 204 would show here).
  assert.deepEqual(consoleErrors.filter((text) => !/net::ERR_/.test(text)), [], "no page errors");
  t.diagnostic(`console errors from the cut: ${JSON.stringify(consoleErrors)}`);
  t.diagnostic(`requests: ${JSON.stringify(streamRequests().map(({ connection, headers, status }) => ({ connection, lastEventId: headers["last-event-id"], status })))}`);
  await page.close();
});

test("EventSource gives up at once on 401 and 403, without retrying", async () => {
  const runId = `e2e-es-denied-${randomUUID()}`;
  const cases = [
    { name: "a token for another run", token: mintToken(secret, { subscribe: [`${runId}-other`] }), status: 403 },
    { name: "a token signed with another key", token: mintToken(randomSecret(), { subscribe: [runId] }), status: 401 },
  ];
  // The run exists and is live, so only authorization can refuse.
  const publisher = openPublisher(relay.baseUrl, runId, mintToken(secret, { publish: [runId] }));
  publisher.send({ type: "RUN_STARTED", threadId: randomUUID(), runId, timestamp: Date.now() });
  for (const c of cases) {
    const src = `http://127.0.0.1:${proxy.port}/v1/runs/${runId}/events?access_token=${encodeURIComponent(c.token)}`;
    const page = await chromium.context.newPage();
    const before = proxy.exchanges.length;
    await page.goto(`${site.origin}/es.html?src=${encodeURIComponent(src)}`);
    await waitFor(() => page.evaluate(() => window.es.readyState === EventSource.CLOSED), { describe: () => `EventSource closed (${c.name})` });
    const mine = () => proxy.exchanges.slice(before).filter((e) => e.path.startsWith(`/v1/runs/${runId}/events`));
    await waitFor(() => mine()[0]?.status, { describe: () => `the response (${c.name})` });
    assert.equal(mine()[0].status, c.status, c.name);
    await new Promise((resolve) => setTimeout(resolve, 4 * RETRY_MS));
    assert.equal(mine().length, 1, `no retry after ${c.status} (${c.name})`);
    assert.equal(await page.evaluate(() => window.received.length), 0);
    await page.close();
  }
  publisher.send({ type: "RUN_FINISHED", threadId: randomUUID(), runId, timestamp: Date.now() });
  assert.equal((await publisher.end()).status, 200);
});

test("after a resume by ?lastEventId=, the browser's own reconnect (Last-Event-ID header) wins", async () => {
  // The demo page resumes a cut with ?lastEventId=K; if the network then drops, EventSource reconnects
  // to the same URL adding the header Last-Event-ID: M (M > K). The header must win, else events
  // K+1..M would come twice.
  const runId = `e2e-es-both-${randomUUID()}`;
  const events = agUiRun(runId, 26); // 30 events
  const publisher = openPublisher(relay.baseUrl, runId, mintToken(secret, { publish: [runId] }));
  for (const event of events.slice(0, 15)) publisher.send(event);
  const token = mintToken(secret, { subscribe: [runId] });
  const src = `http://127.0.0.1:${proxy.port}/v1/runs/${runId}/events?access_token=${encodeURIComponent(token)}&lastEventId=5`;
  const page = await chromium.context.newPage();
  await page.goto(`${site.origin}/es.html?src=${encodeURIComponent(src)}`);
  const received = () => page.evaluate(() => window.received.length);
  await waitFor(async () => (await received()) >= 10, { describe: async () => `events 6..15 (have ${await received()})` });
  assert.ok(proxy.cutAll() >= 1);
  for (const event of events.slice(15)) publisher.send(event);
  assert.equal((await publisher.end()).status, 200);
  await waitFor(async () => (await received()) >= 25, { describe: async () => `events 6..30 (have ${await received()})` });
  await waitFor(() => page.evaluate(() => window.es.readyState === EventSource.CLOSED), { timeoutMs: 5_000 + 3 * RETRY_MS, describe: () => "EventSource closed after the run" });
  const got = await page.evaluate(() => window.received);
  assert.deepEqual(got.map((m) => m.id), events.slice(5).map((_, i) => String(i + 6)), "6..30 once each");
  const reconnect = proxy.exchanges.filter((e) => e.path.includes(runId))[1];
  assert.equal(reconnect.headers["last-event-id"], "15");
  assert.match(reconnect.path, /lastEventId=5/, "the reconnect still carries the old query parameter");
  await page.close();
});
