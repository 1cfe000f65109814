// The /demo page in headless Chromium against the real server (--demo): a run streams into the page;
// a run whose connection is cut (twice) renders exactly the same text as an uncut one; no console errors.
// Screenshots are kept in e2e/artifacts/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, randomSecret } from "../lib/server.js";
import { launchChromium } from "../lib/browser.js";
import { readEventStream } from "../lib/sse.js";
import { EventSchemas } from "@ag-ui/core/schemas";

const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "artifacts");
const SPEED = 2; // the simulated run takes about 5 s instead of 10
const RUN_TIMEOUT_MS = 30_000;

let relay;
let chromium;

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  relay = await startServer(["--demo", "--jwt-secret", randomSecret()]);
  chromium = await launchChromium();
});

after(async () => {
  await chromium?.close();
  await relay?.stop();
});

/** Opens the demo page, recording console errors and failed requests. */
async function openDemo() {
  const page = await chromium.context.newPage();
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e}`));
  page.on("requestfailed", (r) => {
    // a connection the page closes itself (the cut) is not a failure of the page
    if (!/ERR_ABORTED/.test(r.failure()?.errorText || "")) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  const response = await page.goto(`${relay.baseUrl}/demo?speed=${SPEED}`);
  assert.equal(response.status(), 200, "GET /demo");
  assert.equal(await page.title(), "IQ-Stream demo: a resumable AI answer");
  // what the page shows in the same task that shows the run's end: read in a MutationObserver of the state, which
  // runs before the next animation frame, so a count drawn a frame after "finished" is caught every time
  await page.evaluate(() => new MutationObserver(() => {
    if (document.body.dataset.state === "finished" && window.shownAtTheEnd === undefined) {
      window.shownAtTheEnd = document.getElementById("events").textContent;
    }
  }).observe(document.body, { attributes: true, attributeFilter: ["data-state"] }));
  return { page, problems };
}

const stats = (page) => page.evaluate(() => window.demo.stats());

async function waitForStats(page, predicate, what, timeoutMs = RUN_TIMEOUT_MS) {
  await page.waitForFunction(predicate, null, { timeout: timeoutMs, polling: 20 }).catch(async (e) => {
    throw new Error(`waiting for ${what}: ${e.message}\nstats: ${JSON.stringify(await stats(page))}\nserver:\n${relay.output().slice(-2000)}`);
  });
}

/** The rendered conversation: question, both answers, the tool call's arguments and result summary. */
const transcript = (page) => page.locator("#transcript").innerText();

async function assertCompleteRun(page, s) {
  assert.equal(s.expected, 429, "the demo run has the WORKLOAD.md shape");
  assert.equal(s.received, s.expected, "every event arrived");
  assert.equal(s.lastId, s.expected);
  assert.equal(s.gaps, 0, "no gap");
  assert.equal(s.duplicates, 0, "no duplicate");
  assert.equal(await page.locator("body").getAttribute("data-state"), "finished");
  // the counters are drawn once per animation frame (demo.js render()), but with the run's end at once: the page
  // said "finished" beside "428" for 429 received (CI, 2026-12-02) until finish() drew them itself
  assert.equal(await page.evaluate(() => window.shownAtTheEnd), "429", "the count shown with \"finished\"");
  assert.equal(await page.locator("#events").innerText(), "429");
  assert.match(await page.locator("#latency-p50").innerText(), /^\d+ ms$/, "a live latency is shown");
  assert.equal(await page.locator(".tool .status").innerText(), "done");
  assert.match(await page.locator(".tool summary").innerText(), /^result: \d+ results, /);
}

let uncutText;

test("the demo page streams a run token by token", async (t) => {
  const { page, problems } = await openDemo();
  await page.click("#ask");
  // Part of the answer is on screen while the run is still going: it streams, it is not dumped at the end.
  await waitForStats(page, () => window.demo.stats()?.received >= 50, "the first tokens");
  const partial = await page.locator(".bubble.assistant").first().innerText();
  const early = await stats(page);
  assert.ok(!early.ended && early.received < early.expected, `still streaming: ${JSON.stringify(early)}`);
  assert.ok(partial.length > 20 && partial.startsWith("Good question"), `partial answer: ${partial}`);
  assert.ok(await page.locator(".bubble.assistant.streaming").count() === 1, "the streaming cursor is shown");
  await page.screenshot({ path: path.join(ARTIFACTS, "demo-streaming.png"), fullPage: true });

  await waitForStats(page, () => window.demo.stats()?.ended, "the end of the run");
  const s = await stats(page);
  await assertCompleteRun(page, s);
  assert.equal(s.connections, 1);
  assert.equal(s.cuts, 0);
  t.diagnostic(`page log: ${(await page.locator("#log").innerText()).replace(/\n/g, " | ")}`);
  uncutText = await transcript(page);
  assert.ok(uncutText.includes("Good question") && uncutText.includes("delivered the instant you came back."), "both answers are rendered in full");
  assert.ok(uncutText.includes("search_docs"), "the tool call is shown");
  await page.screenshot({ path: path.join(ARTIFACTS, "demo-uncut.png"), fullPage: true });
  assert.deepEqual(problems, [], "no console errors or failed requests");
  await page.close();
});

test("cutting the connection twice leaves the rendered answer identical to an uncut run", async (t) => {
  assert.ok(uncutText, "needs the uncut run of the previous test");
  const { page, problems } = await openDemo();
  const streamUrls = [];
  page.on("request", (r) => r.url().includes("/v1/runs/") && streamUrls.push(new URL(r.url())));
  await page.click("#ask");

  // First cut inside the first answer.
  await waitForStats(page, () => window.demo.stats()?.received >= 60 && !document.querySelector("#cut").disabled, "60 events");
  await page.click("#cut");
  assert.equal(await page.locator("body").getAttribute("data-state"), "cut");
  const atCut = await stats(page);
  // While away, the run goes on without us: nothing more arrives until the page resumes.
  await waitForStats(page, () => window.demo.stats()?.connections === 2, "the resume");
  await waitForStats(page, () => window.demo.stats()?.received > 0 && document.body.dataset.state === "streaming", "streaming again");

  // Second cut inside the second answer (after the tool's result).
  await waitForStats(page, () => window.demo.stats()?.received >= 300 && !document.querySelector("#cut").disabled, "300 events");
  await page.click("#cut");
  const atSecondCut = await stats(page);
  await waitForStats(page, () => window.demo.stats()?.ended, "the end of the run");

  const s = await stats(page);
  await assertCompleteRun(page, s);
  assert.equal(s.cuts, 2);
  assert.equal(s.connections, 3, "one connect and two resumes");
  assert.ok(s.replayed > 0, `events written while away were replayed on resume: ${JSON.stringify(s)}`);
  assert.ok(atCut.received >= 60 && atCut.received < s.expected, `the first cut was mid-answer: ${JSON.stringify(atCut)}`);
  t.diagnostic(`page log: ${(await page.locator("#log").innerText()).replace(/\n/g, " | ")}`);
  assert.deepEqual(streamUrls.map((u) => u.searchParams.get("lastEventId")), [null, String(atCut.lastId), String(atSecondCut.lastId)],
    "each resume asks for the events after the last one rendered");
  assert.ok(streamUrls.every((u) => u.searchParams.get("access_token")), "the page authenticates its EventSource with ?access_token=");
  assert.equal(await transcript(page), uncutText, "the rendered conversation is identical to the uncut run's");
  await page.screenshot({ path: path.join(ARTIFACTS, "demo.png"), fullPage: true });
  assert.deepEqual(problems, [], "no console errors or failed requests");
  await page.close();
});

test("the simulated run is valid AG-UI 1.0, readable again after it ends, for its run only", async () => {
  const start = await fetch(`${relay.baseUrl}/demo/api/runs`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ speed: 20 }),
  });
  assert.equal(start.status, 201);
  const info = await start.json();
  assert.match(info.runId, /^[A-Za-z0-9._~:-]{1,128}$/);
  assert.equal(info.eventsUrl, `/v1/runs/${info.runId}/events`);

  const stream = await readEventStream(`${relay.baseUrl}${info.eventsUrl}?access_token=${encodeURIComponent(info.token)}`);
  assert.equal(stream.status, 200);
  assert.equal(stream.events.length, 429);
  assert.deepEqual(stream.events.map((e) => e.id), stream.events.map((_, i) => String(i + 1)));
  const events = stream.events.map((e) => JSON.parse(e.data));
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  let previous = 0;
  for (const event of events) {
    const parsed = EventSchemas.safeParse(event);
    assert.ok(parsed.success, `valid AG-UI: ${JSON.stringify(event).slice(0, 200)}: ${parsed.error}`);
    assert.deepEqual(parsed.data, event, "no field unknown to the schema, none missing");
    assert.ok(Number.isInteger(event.timestamp) && event.timestamp >= previous, "integer epoch-ms timestamps in order");
    previous = event.timestamp;
    for (const [key, value] of Object.entries(event)) {
      assert.notEqual(value, null, `no nulls (${key})`);
      if (/Id$/.test(key) && key !== "runId") assert.match(value, uuid, key);
    }
  }
  const types = events.map((e) => e.type);
  assert.equal(types[0], "RUN_STARTED");
  assert.equal(types.at(-1), "RUN_FINISHED");
  assert.equal(events[0].runId, info.runId);
  assert.equal(types.filter((t) => t === "TEXT_MESSAGE_CONTENT").length, 380);
  assert.equal(types.filter((t) => t === "TOOL_CALL_ARGS").length, 40);
  const result = events.find((e) => e.type === "TOOL_CALL_RESULT");
  assert.ok(result.content.length >= 8000, "an 8 KiB tool result");
  const args = events.filter((e) => e.type === "TOOL_CALL_ARGS").map((e) => e.delta).join("");
  assert.equal(typeof JSON.parse(args), "object", "the streamed arguments form one JSON object");
  // The tool's pause: 1.5 s / speed 20 = 75 ms between TOOL_CALL_END and TOOL_CALL_RESULT.
  const end = events.find((e) => e.type === "TOOL_CALL_END");
  assert.ok(result.timestamp - end.timestamp >= 70, `the tool pause (${result.timestamp - end.timestamp} ms)`);

  // A page reloaded after the end reads the same run again from its first event (retention)...
  const again = await readEventStream(`${relay.baseUrl}${info.eventsUrl}?access_token=${encodeURIComponent(info.token)}`);
  assert.equal(again.status, 200);
  assert.deepEqual(again.events, stream.events, "the ended run reads the same from the start");
  // ...and one that had it all is told to stop.
  const done = await readEventStream(`${relay.baseUrl}${info.eventsUrl}`, { headers: { Authorization: `Bearer ${info.token}`, "Last-Event-ID": "429" } });
  assert.equal(done.status, 204);

  // The page's token is for this run only.
  const other = await fetch(`${relay.baseUrl}/v1/runs/${info.runId}x/events`, { headers: { Authorization: `Bearer ${info.token}` } });
  assert.equal(other.status, 403, "the page's token cannot read another run");
  await other.body?.cancel();

  const status = await fetch(`${relay.baseUrl}/v1/runs/${info.runId}`, { headers: { Authorization: `Bearer ${info.token}` } });
  assert.equal(status.status, 200);
  const run = await status.json();
  assert.equal(run.events, 429);
  assert.equal(run.ended, true);
});

test("a plain `serve` with no key (development mode) serves the demo too", async () => {
  const dev = await startServer([]);
  try {
    const page = await fetch(`${dev.baseUrl}/demo`);
    assert.equal(page.status, 200, "GET /demo in development mode");
    assert.match(await page.text(), /IQ-Stream/);
    const start = await fetch(`${dev.baseUrl}/demo/api/runs?speed=50`, { method: "POST" });
    assert.equal(start.status, 201);
    const info = await start.json();
    const stream = await readEventStream(`${dev.baseUrl}${info.eventsUrl}?access_token=${encodeURIComponent(info.token)}`);
    assert.equal(stream.status, 200);
    assert.equal(stream.events.length, 429);
    assert.equal(JSON.parse(stream.events.at(-1).data).type, "RUN_FINISHED");
  } finally {
    await dev.stop();
  }
});
