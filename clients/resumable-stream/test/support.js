// Test support: app instances (test/app.js, the AI SDK docs' routes on node:http) as separate processes sharing
// one chat store, a local Redis (Debian's redis-server) for the original resumable-stream, and the AI SDK's own
// client side (DefaultChatTransport, readUIMessageStream). The IQ-Stream server and tokens come from the JS
// client's test support.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DefaultChatTransport, readUIMessageStream } from "ai";

export { startServer, waitFor } from "../../js/test/support.js";

const here = path.dirname(fileURLToPath(import.meta.url));

/** A fresh chat store folder, shared by the instances of one test. */
export function chatStore() {
  return mkdtempSync(path.join(os.tmpdir(), "iq-chats-"));
}

export function readChat(store, id) {
  try {
    return JSON.parse(readFileSync(path.join(store, `${id}.json`), "utf8"));
  } catch {
    return null;
  }
}

const examples = path.join(here, "..", "examples");
const IQ_IMPORT = "import { createResumableStreamContext } from '@iqstream/resumable-stream';";
const ORIGINAL_IMPORT = "import { createResumableStreamContext } from 'resumable-stream';";

/**
 * The routes module for `backend`: examples/routes.js itself for IQ-Stream; for the original, the same file with
 * its one import line changed (written beside it as routes.resumable-stream.js, not committed).
 */
export function routesFor(backend) {
  const file = path.join(examples, "routes.js");
  if (backend === "iqstream") return file;
  const source = readFileSync(file, "utf8");
  const lines = source.split("\n");
  const changed = lines.map((l) => (l === IQ_IMPORT ? ORIGINAL_IMPORT : l));
  const differing = lines.filter((l, i) => l !== changed[i]).length;
  if (differing !== 1) throw new Error(`examples/routes.js: expected one import line to change, found ${differing}`);
  const out = path.join(examples, "routes.resumable-stream.js");
  writeFileSync(out, changed.join("\n"));
  return out;
}

/**
 * One app instance: `node examples/server.js` (the docs' routes on node:http) with `env` (CHAT_STORE, RESUMABLE, IQSTREAM_URL/TOKEN or REDIS_URL, MOCK_*).
 * Resolves once it listens: { url, pid, kill(signal), exited }.
 */
export async function startApp(env) {
  const child = spawn(process.execPath, [path.join(examples, "server.js")], {
    env: { ...process.env, PORT: "0", ROUTES: routesFor(env.RESUMABLE ?? "iqstream"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`app did not listen in 20 s:\n${output}`)), 20_000);
    child.stdout.on("data", (c) => {
      output += c;
      const m = /listening (\d+)/.exec(output);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.stderr.on("data", (c) => { output += c; });
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`app exited (${code}):\n${output}`)); });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    output: () => output,
    exited,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}

/** A local redis-server on a free high port (below the ephemeral range), no persistence. */
export async function startRedis() {
  const bin = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const child = spawn(bin, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c) => { output += c; });
    const ready = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      const check = () => {
        if (/Ready to accept connections/.test(output)) { clearTimeout(timer); resolve(true); }
      };
      child.stdout.on("data", check);
      child.once("exit", () => { clearTimeout(timer); resolve(false); });
    });
    if (ready) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        async commandCount() { return redisCommandCount(port); },
        async stop() {
          if (child.exitCode !== null) return;
          const exited = new Promise((r) => child.once("exit", r));
          child.kill("SIGKILL");
          await exited;
        },
      };
    }
    child.kill("SIGKILL");
  }
  throw new Error("redis-server did not start (5 ports tried)");
}

/** Redis's total_commands_processed (INFO stats), over a raw RESP connection. */
function redisCommandCount(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => s.write("INFO stats\r\n"));
    let buf = "";
    s.on("data", (c) => {
      buf += c;
      const m = /total_commands_processed:(\d+)/.exec(buf);
      if (m) { s.end(); resolve(Number(m[1])); }
    });
    s.on("error", reject);
  });
}

/** The AI SDK's own transport pointed at one instance, with the docs' prepareSendMessagesRequest. */
export function transport(app) {
  return new DefaultChatTransport({
    api: `${app.url}/api/chat`,
    prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, message: messages[messages.length - 1] } }),
  });
}

export function userMessage(text, id = `u-${Math.random().toString(36).slice(2)}`) {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** The text of the answer the mock model gives: "token-1 token-2 ... token-N ". */
export function expectedText(tokens) {
  return Array.from({ length: tokens }, (_, i) => `token-${i + 1} `).join("");
}

/** Folds a stream of UI message chunks into the final message (readUIMessageStream), and the chunks seen. */
export async function fold(stream) {
  const chunks = [];
  const tap = stream.pipeThrough(new TransformStream({ transform(c, ctl) { chunks.push(c); ctl.enqueue(c); } }));
  let message;
  for await (const m of readUIMessageStream({ stream: tap })) message = m;
  return { message, chunks, text: textOf(message) };
}

export function textOf(message) {
  return (message?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
}

/** Reads `stream` until `n` chunks of type `type` were seen, then aborts the request (a cut). */
export async function readThenCut(stream, abort, type, n) {
  const reader = stream.getReader();
  let seen = 0;
  const chunks = [];
  while (seen < n) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended after ${seen} ${type} chunks`);
    chunks.push(value);
    if (value.type === type) seen++;
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  return chunks;
}
