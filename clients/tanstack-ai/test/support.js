// Test support: TanStack AI server instances as Node processes (test/instance.js: the docs' example on
// loopback), a TCP load balancer whose target the test moves and whose connections it cuts, and a fetch for
// TanStack's client that keeps the raw SSE text each response carried.
// The IQ-Stream server and tokens come from the JS client's test support.
import { fork } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";

export { startServer, waitFor, latch, mintToken } from "../../js/test/support.js";

/**
 * A TanStack AI server instance as its own process, pointed at IQ-Stream `iqUrl` with `token`. Resolves once it
 * listens: { url (its /api/chat), port, pid, hold(), open(), appends(), requests(), kill() (SIGKILL), close() }.
 */
export async function startInstance({ iqUrl, token, env = {}, timeoutMs = 20_000 }) {
  const child = fork(fileURLToPath(new URL("./instance.js", import.meta.url)), [], {
    env: { ...process.env, IQSTREAM_URL: iqUrl, IQSTREAM_TOKEN: token, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map();
  let nextId = 0;
  let exited = null;
  const exit = new Promise((resolve) => child.once("exit", (code, signal) => {
    exited = signal ?? code;
    for (const { reject } of pending.values()) reject(new Error(`instance ${child.pid} exited (${exited})`));
    pending.clear();
    resolve(exited);
  }));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${child.pid} did not listen within ${timeoutMs} ms`)), timeoutMs);
    child.once("message", (m) => { clearTimeout(timer); resolve(m.url); });
    exit.then((how) => { clearTimeout(timer); reject(new Error(`instance ${child.pid} exited (${how}) before listening`)); });
  }).catch((err) => { child.kill("SIGKILL"); throw err; });
  child.on("message", ({ id, value, error }) => {
    const call = pending.get(id);
    if (!call) return;
    pending.delete(id);
    if (error) call.reject(new Error(error));
    else call.resolve(value);
  });
  const ask = (op) => new Promise((resolve, reject) => {
    if (exited !== null) return reject(new Error(`instance ${child.pid} exited (${exited})`));
    const id = nextId++;
    pending.set(id, { resolve, reject });
    child.send({ id, op });
  });
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid,
    hold: () => ask("hold"),
    open: () => ask("open"),
    /** The NDJSON bodies this instance POSTed to IQ-Stream, in order. */
    appends: () => ask("appends"),
    /** The requests it served: [{ method, url, lastEventId }]. */
    requests: () => ask("requests"),
    /** SIGKILL, by its pid; resolves once it has exited. */
    async kill() {
      if (exited === null) process.kill(child.pid, "SIGKILL");
      await exit;
    },
    /** SIGTERM (SIGKILL after 5 s), by its pid; resolves once it has exited. */
    async close() {
      if (exited !== null) return;
      process.kill(child.pid, "SIGTERM");
      const timer = setTimeout(() => { if (exited === null) process.kill(child.pid, "SIGKILL"); }, 5000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * A TCP load balancer in front of the instances: new connections go to `target` (a port, settable); cut()
 * destroys every open connection, both sides, as a dropped network or a removed backend does.
 */
export async function startBalancer(targetPort) {
  const sockets = new Set();
  const lb = { target: targetPort, connections: 0 };
  const server = net.createServer((client) => {
    lb.connections++;
    const upstream = net.connect(lb.target, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on("error", close);
      s.on("close", close);
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  lb.url = `http://127.0.0.1:${server.address().port}/api/chat`;
  lb.cut = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  lb.close = async () => {
    lb.cut();
    await new Promise((resolve) => server.close(resolve));
  };
  return lb;
}

/**
 * A fetch for TanStack's client (`fetchClient`) that records each response: { method, url, lastEventId (the
 * request's Last-Event-ID), status, text (the SSE body as far as it came) }.
 */
export function recordingFetch() {
  const responses = [];
  const fn = async (url, init = {}) => {
    const response = await fetch(url, init);
    const headers = new Headers(init.headers);
    const record = { method: init.method ?? "GET", url: String(url), lastEventId: headers.get("Last-Event-ID"), status: response.status, text: "" };
    responses.push(record);
    if (!response.body) return response;
    const decoder = new TextDecoder();
    const tee = new TransformStream({
      transform(chunk, controller) {
        record.text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(tee), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  fn.responses = responses;
  return fn;
}

/** The SSE events of a body: [{ id, data }] (data as sent, one line). */
export function sseEvents(text) {
  const events = [];
  const frames = text.split("\n\n");
  frames.pop(); // after the last blank line: nothing, or a frame cut short
  for (const frame of frames) {
    let id;
    const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("id: ")) id = line.slice(4);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length > 0) events.push({ id, data: data.join("\n") });
  }
  return events;
}

/** The body fetchServerSentEvents posts (threadId, runId, one user message). */
export function userMessage(text = "What does the Q3 report say?") {
  return [{ id: `u-${Date.now()}`, role: "user", parts: [{ type: "text", content: text }] }];
}
