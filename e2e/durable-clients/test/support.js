// Where the Durable Streams clients under test point: IQ-Stream (the suite's form: two nodes of a cluster with
// --peers / --advertise / --cluster-secret and JWT auth on /v1/stream/) or, with DURABLE_CLIENTS_SERVER=reference,
// the protocol's Node reference server (@durable-streams/server, no auth, one process standing in for both
// "nodes"), against which these tests were written first. Each test file starts its own target.
import { spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const JAR = process.env.IQSTREAM_JAR || path.resolve(here, "..", "..", "..", "server", "target", "iqstream-server.jar");
export const SERVER = process.env.DURABLE_CLIENTS_SERVER || "iqstream";

/** Waits until `cond()` is truthy (it may be async), polling every 50 ms; throws with `what` after `timeoutMs`. */
export async function waitFor(cond, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await cond();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const b64url = (v) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** An HS256 JWT with IQ-Stream's rights claim: {publish, subscribe} patterns over stream paths. */
function mint(secret, rights, ttlSeconds = 600) {
  const now = Math.floor(Date.now() / 1000);
  const head = `${b64url({ alg: "HS256", typ: "JWT" })}.${b64url({ sub: "durable-clients", iat: now, exp: now + ttlSeconds, iqstream: rights })}`;
  return `${head}.${createHmac("sha256", Buffer.from(secret, "utf8")).update(head).digest("base64url")}`;
}

function javaCommand() {
  if (process.env.IQSTREAM_JAVA) return process.env.IQSTREAM_JAVA;
  if (process.env.JAVA_HOME) return path.join(process.env.JAVA_HOME, "bin", "java");
  return "java";
}

async function startIqStreamCluster(nodes) {
  if (!existsSync(JAR)) throw new Error(`server jar not found: ${JAR} (build it: ./iqstream build, or set IQSTREAM_JAR)`);
  const secret = randomBytes(32).toString("hex");
  const clusterSecret = randomBytes(32).toString("hex");
  const ports = await Promise.all(Array.from({ length: nodes }, freePort));
  const peers = ports.map((p) => `127.0.0.1:${p}`).join(",");
  const children = ports.map((port) => {
    const child = spawn(javaCommand(), ["-Xmx192m", "-jar", JAR, "serve", "--host", "127.0.0.1", "--port", String(port),
      "--workers", "1", "--jwt-secret", secret, "--peers", peers, "--advertise", `127.0.0.1:${port}`,
      "--cluster-secret", clusterSecret], { stdio: ["ignore", "pipe", "pipe"] });
    child.output = "";
    child.stdout.on("data", (d) => { child.output += d; });
    child.stderr.on("data", (d) => { child.output += d; });
    return child;
  });
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  // ready, and every node's ready set (X-IQStream-View on /readyz) names every node: until then a node that has
  // not yet seen its peer ready places a new stream on itself while the peer routes the same path to the other
  // (the stream has no lookup of another owner: docs/DURABLE-STREAMS.md), and a read right after a create 404s
  const view = async (url) => {
    try {
      const res = await fetch(`${url}/readyz`);
      return res.status === 200 ? (res.headers.get("x-iqstream-view") ?? "") : null;
    } catch { return null; }
  };
  try {
    await waitFor(async () => {
      const dead = children.find((c) => c.exitCode !== null);
      if (dead) throw new Error(`an IQ-Stream node exited (${dead.exitCode}):\n${dead.output}`);
      const views = await Promise.all(urls.map(view));
      return views.every((v) => v !== null && v.split(",").filter(Boolean).length === nodes && v === views[0]);
    }, "both IQ-Stream nodes ready, each seeing both ready (cluster membership settled)", 60_000);
  } catch (err) {
    children.forEach((c) => c.kill("SIGKILL"));
    throw err;
  }
  return {
    kind: "iqstream",
    auth: true,
    nodes: urls,
    token: (rights) => mint(secret, rights),
    output: () => children.map((c, i) => `--- node ${i} ---\n${c.output}`).join("\n"),
    async stop() {
      await Promise.all(children.map((c) => new Promise((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once("exit", resolve);
        c.kill("SIGTERM");
        setTimeout(() => c.kill("SIGKILL"), 10_000).unref();
      })));
    },
  };
}

/**
 * One IQ-Stream node (JWT auth on) that a test can stop and start again on the same port and flags: {url, token(rights),
 * kill(signal) (resolves once the process has exited), restart() (resolves once it is ready again), output(), stop()}.
 * `flags` are added to the command line (e.g. --durability disk --data-dir DIR).
 */
export async function startNode(flags = []) {
  if (!existsSync(JAR)) throw new Error(`server jar not found: ${JAR} (build it: ./iqstream build, or set IQSTREAM_JAR)`);
  const secret = randomBytes(32).toString("hex");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child;
  let output = "";
  const launch = async () => {
    child = spawn(javaCommand(), ["-Xmx192m", "-jar", JAR, "serve", "--host", "127.0.0.1", "--port", String(port),
      "--workers", "1", "--warmup", "0", "--jwt-secret", secret, ...flags], { stdio: ["ignore", "pipe", "pipe"] });
    const c = child;
    output += `--- started: ${flags.join(" ")} ---\n`;
    c.stdout.on("data", (d) => { output += d; });
    c.stderr.on("data", (d) => { output += d; });
    await waitFor(async () => {
      if (c.exitCode !== null) throw new Error(`the IQ-Stream node exited (${c.exitCode}):\n${output}`);
      try { return (await fetch(`${url}/readyz`)).status === 200; } catch { return false; }
    }, "the IQ-Stream node ready", 60_000);
  };
  const kill = (signal) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", resolve);
    child.kill(signal);
  });
  await launch();
  return {
    url,
    token: (rights) => mint(secret, rights),
    streamUrl: (streamPath) => `${url}/v1/stream/${streamPath}`,
    kill,
    restart: launch,
    output: () => output,
    async stop() {
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await kill("SIGTERM");
      clearTimeout(t);
    },
  };
}

async function startReference() {
  const { DurableStreamTestServer } = await import("@durable-streams/server");
  const server = new DurableStreamTestServer({ port: 0, host: "127.0.0.1", longPollTimeout: 500 });
  const url = (await server.start()).replace(/\/$/, "");
  return {
    kind: "reference",
    auth: false,
    nodes: [url, url],
    token: () => "unused-by-the-reference-server",
    output: () => "",
    stop: () => server.stop(),
  };
}

/**
 * Starts the target: { kind, auth (whether tokens are checked), nodes: [base URL, base URL], token(rights),
 * streamUrl(node, path), output(), stop() }.
 */
export async function startTarget() {
  const target = SERVER === "reference" ? await startReference() : await startIqStreamCluster(2);
  target.streamUrl = (node, streamPath) => `${target.nodes[node]}/v1/stream/${streamPath}`;
  return target;
}

/** A stream path no other test uses. */
export function uniquePath(prefix) {
  return `${prefix}/${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}
