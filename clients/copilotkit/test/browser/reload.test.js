// A reload mid-answer in headless Chromium: CopilotKit's own React chat (@copilotkit/react-core v2,
// bundled here with esbuild from npm) on a page served with the docs' example (examples/server.js: a
// CopilotRuntime whose runner is IqStreamAgentRunner), with an explicit thread id. The page is reloaded
// while the agent is paused mid-answer; once the run ends the page shows the complete answer, each
// sentence once.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import http from "node:http";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { createHandler, createRuntime } from "../../examples/server.js";
import { ScriptedAgent, latch, startServer, waitFor } from "../support.js";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (scripts/install-chromium.sh, or CHROMIUM_PATH)`;

let iq;
let site;
let browser;
// the agent pauses before the second message's third word: "The Q3 " shown, "report is ready." to come
const control = { holds: {}, aborts: 0, runs: 0, holdAt: 16 };

/** The docs' example (its runtime under /api), and the page (/ and /app.js) on the same origin. */
async function startSite() {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL("./page.jsx", import.meta.url))],
    bundle: true, write: false, format: "esm", platform: "browser", jsx: "automatic",
    define: { "process.env.NODE_ENV": "\"production\"" }, loader: { ".css": "empty" }, logLevel: "error",
  });
  const js = bundle.outputFiles[0].text;
  const api = createHandler(createRuntime({ assistant: new ScriptedAgent(control) }));
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    if (req.url.startsWith("/api")) {
      if (process.env.DEBUG_SITE) {
        let b = "";
        req.on("data", (c) => { b += c; });
        req.on("end", () => console.error("API", req.method, req.url, b.slice(0, 300)));
      }
      return api(req, res);
    }
    if (req.url.startsWith("/app.js")) {
      res.writeHead(200, { "Content-Type": "text/javascript" });
      return res.end(js);
    }
    res.writeHead(200, { "Content-Type": "text/html" });
    return res.end("<!doctype html><meta charset=utf-8><title>chat</title><div id=root></div>"
      + "<script type=module src=/app.js></script>");
  });
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

before(async () => {
  if (skip) return;
  iq = await startServer(["--publisher-timeout", "5s"]);
  // configured as the example says: IQ-Stream's address and secret in the environment
  process.env.IQSTREAM_URL = iq.baseUrl;
  process.env.IQSTREAM_JWT_SECRET = iq.secret;
  site = await startSite();
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
});

after(async () => {
  for (const hold of Object.values(control.holds)) hold.open();
  await browser?.close();
  await site?.close();
  await iq?.stop();
});

const count = (text, part) => text.split(part).length - 1;

test("a page reloaded mid-answer shows the whole answer once the run ends, with no duplicate text", { skip }, async () => {
  const threadId = "browser-reload";
  const hold = latch();
  control.holds[threadId] = hold;
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${site.url}/?thread=${threadId}`);
  const input = page.locator("textarea").first();
  await input.waitFor({ timeout: 20_000 });
  await input.fill("Where is the Q3 report?");
  await input.press("Enter");
  const body = () => page.evaluate(() => document.body.innerText);
  // the agent pauses mid-answer: the first message whole, the second one begun
  await waitFor(async () => (await body()).includes("The Q3"), 20_000, "the answer up to the pause");
  assert.ok(!(await body()).includes("report is ready"), await body());
  const runsBefore = control.runs;
  await page.reload();
  // the agent is still held: what the reloaded page shows of the answer can only come from the resume of the run
  // in progress (no history of a finished run exists yet, and no new run was started)
  await waitFor(async () => (await body()).includes("The Q3"), 20_000, "the reloaded page to show the answer so far");
  assert.ok(!(await body()).includes("report is ready"), "the agent was held across the reload");
  assert.equal(control.runs, runsBefore, "the reload started no new run: the page resumed the held one");
  hold.open();
  await waitFor(async () => (await body()).includes("The Q3 report is ready."), 20_000, "the complete answer");
  const text = await body();
  assert.equal(count(text, "Looking that up for you."), 1, text);
  assert.equal(count(text, "The Q3 report is ready."), 1, text);
  assert.equal(count(text, "The Q3"), 1, text);
  assert.deepEqual(errors, []);
  assert.equal(control.runs, runsBefore, "one run, resumed: the whole answer came through the resume");
  delete control.holds[threadId];
  await page.close();
});
