// useChat({ resume: true }) from @ai-sdk/react in headless Chromium: the docs' Chat component (test/browser/
// page.jsx, bundled with esbuild) served by an app instance running the docs' routes on @iqstream/resumable-stream
// (examples/). The page is reloaded mid-answer; the resumed answer completes once, with no duplicated text. The
// same test runs against the original resumable-stream with a local Redis (same routes, one import line changed).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { chatStore, expectedText, readChat, startApp, startRedis, startServer, waitFor } from "../support.js";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (scripts/install-chromium.sh, or CHROMIUM_PATH)`;
const TOKENS = 60;
/** The model waits before this delta while the test holds it (examples/model.js, MOCK_HOLD_FILE). */
const HOLD_AT = 20;

const REDIS_BIN = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";
let iq;
let redis;
let site;
let browser;
const apps = [];

before(async () => {
  if (skip) return;
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL("./page.jsx", import.meta.url))],
    bundle: true, write: false, format: "esm", platform: "browser", jsx: "automatic",
    define: { "process.env.NODE_ENV": "\"production\"" }, logLevel: "error",
  });
  site = mkdtempSync(path.join(os.tmpdir(), "iq-page-"));
  writeFileSync(path.join(site, "app.js"), bundle.outputFiles[0].text);
  writeFileSync(path.join(site, "index.html"), "<!doctype html><meta charset=utf-8><title>chat</title>"
    + "<div id=root></div><script type=module src=/app.js></script>");
  iq = await startServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
});

after(async () => {
  await browser?.close();
  await Promise.all(apps.map((a) => a.kill()));
  await iq?.stop();
  await redis?.stop();
});

const count = (text, part) => text.split(part).length - 1;

async function appFor(backend) {
  const env = backend === "iqstream"
    ? { RESUMABLE: "iqstream", IQSTREAM_URL: iq.baseUrl,
      IQSTREAM_TOKEN: iq.token({ publish: ["resumable-stream:*"], subscribe: ["resumable-stream:*"] }) }
    : { RESUMABLE: "redis", REDIS_URL: (redis ??= await startRedis()).url };
  const store = chatStore();
  const hold = path.join(mkdtempSync(path.join(os.tmpdir(), "iq-hold-")), "hold");
  writeFileSync(hold, "");
  const app = await startApp({ ...env, CHAT_STORE: store, STATIC_DIR: site, MOCK_TOKENS: String(TOKENS),
    MOCK_DELAY_MS: "60", MOCK_HOLD_FILE: hold, MOCK_HOLD_AT: String(HOLD_AT) });
  apps.push(app);
  return { app, store, release: () => rmSync(hold, { force: true }) };
}

for (const backend of ["iqstream", "redis"]) {
  const skipThis = skip || (backend === "redis" && !existsSync(REDIS_BIN) && `no redis-server at ${REDIS_BIN}`);
  const name = backend === "iqstream" ? "@iqstream/resumable-stream" : "resumable-stream + Redis";
  test(`a page reloaded mid-answer resumes it: the answer completes once, no duplicated text (${name})`,
    { skip: skipThis }, async () => {
    const { app, store, release } = await appFor(backend);
    const chatId = "browser-reload";
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${app.url}/?chat=${chatId}`);
    const input = page.locator("#input");
    await input.waitFor({ timeout: 20_000 });
    await input.fill("hi");
    await input.press("Enter");
    const assistant = () => page.evaluate(() =>
      [...document.querySelectorAll(".message.assistant")].map((e) => e.textContent));
    await waitFor(async () => ((await assistant())[0] ?? "").includes("token-10 "), 20_000, "the answer begun");
    // the app has saved the chat's active stream (createNewResumableStream resolved): a reload now can resume it
    await waitFor(() => readChat(store, chatId)?.activeStreamId, 20_000, "the active stream saved");
    // the model is held before its delta HOLD_AT: the answer cannot finish (and be stored) during the reload
    await waitFor(async () => ((await assistant())[0] ?? "").includes(`token-${HOLD_AT - 1} `), 20_000,
      "the answer up to the hold");
    await page.reload();
    // after the reload the stored chat has the user message only and the model is still held: what the page shows
    // of the answer can only come from the resume, which replays it from its start
    await waitFor(async () => ((await assistant())[0] ?? "").includes(`token-${HOLD_AT - 1} `), 30_000,
      "the answer so far, from the resume, with the model held");
    assert.ok(!(readChat(store, chatId)?.messages ?? []).some((m) => m.role === "assistant"),
      "no answer stored yet: the page's answer is the resume's");
    assert.ok(readChat(store, chatId)?.activeStreamId, "the stream still active while the model is held");
    assert.ok(!(await assistant())[0].includes(`token-${HOLD_AT} `), "the model was held across the reload");
    release();
    await waitFor(async () => ((await assistant())[0] ?? "").includes(`token-${TOKENS} `), 30_000,
      "the resumed answer complete");
    await waitFor(async () => (await page.textContent("#status")) === "ready", 10_000, "useChat ready");
    const shown = await assistant();
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.equal(shown[0], expectedText(TOKENS));
    const text = await page.evaluate(() => document.body.innerText);
    assert.equal(count(text, "token-1 "), 1);
    assert.equal(count(text, "hi"), 1, text);
    assert.deepEqual(errors, []);
    // the producer's onFinish stored the whole answer
    await waitFor(() => readChat(store, chatId)?.activeStreamId === null, 10_000, "the stream finished");
    await page.close();
  });
}
