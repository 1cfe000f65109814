// Development mode (`serve` with no key) with the runner: the PUB token it prints carries the threads
// right, so `new IqStreamAgentRunner({ baseUrl: IQ, token: PUB })` runs, lists and replays a thread.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";
import { IqStreamAgentRunner } from "../src/index.js";
import { JAR, JAVA } from "../../js/test/support.js";
import { ScriptedAgent, runInput, script } from "./support.js";

let server;
let exports;

before(async () => {
  server = spawn(JAVA(), ["-jar", JAR, "serve", "--host", "127.0.0.1", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let banner = "";
  exports = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line in 60 s:\n${banner}`)), 60_000);
    server.stdout.on("data", (c) => {
      banner += c;
      if (!/listening on http:\/\//.test(banner)) return;
      clearTimeout(timer);
      resolve(Object.fromEntries([...banner.matchAll(/export (\w+)='([^']*)'/g)].map((m) => [m[1], m[2]])));
    });
    server.stderr.on("data", (c) => { banner += c; });
    server.on("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}):\n${banner}`)); });
  });
  server.removeAllListeners("exit");
  server.stdout.on("data", () => {});
}, { timeout: 90_000 });

after(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    process.kill(server.pid, "SIGKILL");
    await exited;
  }
});

test("dev mode's PUB token is enough for the runner: run, list the thread, replay it", { timeout: 60_000 }, async () => {
  assert.ok(exports.IQ && exports.PUB && exports.SUB, JSON.stringify(Object.keys(exports)));
  const runner = new IqStreamAgentRunner({ baseUrl: exports.IQ, token: exports.PUB });
  const threadId = "dev-thread";
  const events = await new Promise((resolve, reject) => {
    const out = [];
    runner.run({ threadId, agent: new ScriptedAgent(), input: runInput(threadId, "dev-run") })
      .subscribe({ next: (e) => out.push(e), error: reject, complete: () => resolve(out) });
  });
  assert.deepEqual(events.map((e) => e.type), script(threadId, "dev-run").map((e) => e.type));
  const held = await runner.threadRuns(threadId);
  assert.deepEqual(held.map((r) => [r.runId, r.running]), [[runner.runIdOf(threadId, 0), false]]);
  const replayed = [];
  await new Promise((resolve, reject) => {
    runner.connect({ threadId }).subscribe({ next: (e) => replayed.push(e), error: reject, complete: resolve });
  });
  assert.equal(replayed[0].type, "RUN_STARTED");
  assert.equal(replayed.at(-1).type, "RUN_FINISHED");
  // SUB may read runs but not list threads: the right is PUB's alone
  const sub = await fetch(`${exports.IQ}/v1/threads/${threadId}/runs`, { headers: { Authorization: `Bearer ${exports.SUB}` } });
  assert.equal(sub.status, 403);
});
