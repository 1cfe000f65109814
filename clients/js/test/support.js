// Test support: the real IQ-Stream server as a child process, HS256 tokens minted with
// node:crypto, a TCP proxy whose connections the test can cut, and publishers.
import { spawn, spawnSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The server jar: $IQSTREAM_JAR, else <repo>/server/target/iqstream-server.jar. */
export const JAR = process.env.IQSTREAM_JAR
  ? path.resolve(process.env.IQSTREAM_JAR)
  : path.resolve(here, "../../../server/target/iqstream-server.jar");

/** The feature version of a java binary (21 for 21.0.5), or 0 when it does not run. */
function javaVersion(java) {
  const r = spawnSync(java, ["-XshowSettings:properties", "-version"], { encoding: "utf8", timeout: 30_000 });
  const m = /java\.specification\.version = (\d+)/.exec(`${r.stderr ?? ""}${r.stdout ?? ""}`);
  return m ? Number(m[1]) : 0;
}

/**
 * A java >= 21 to run the server, found as the launcher finds one: $IQSTREAM_JAVA, $JAVA_HOME/bin/java, java on the
 * PATH, then the usual JDK folders. The default java may be older (17), which cannot run the server's class files.
 */
function findJava() {
  const home = process.env.HOME ?? "";
  const inFolders = (dir, tail) => {
    try {
      return readdirSync(dir).sort().reverse().map((d) => path.join(dir, d, ...tail));
    } catch {
      return [];
    }
  };
  const candidates = [
    process.env.IQSTREAM_JAVA,
    process.env.JAVA_HOME && path.join(process.env.JAVA_HOME, "bin", "java"),
    "java",
    ...inFolders("/usr/lib/jvm", ["bin", "java"]),
    ...inFolders("/opt/java", ["bin", "java"]),
    ...inFolders("/Library/Java/JavaVirtualMachines", ["Contents", "Home", "bin", "java"]),
    ...inFolders(path.join(home, ".sdkman", "candidates", "java"), ["bin", "java"]),
    ...inFolders(path.join(home, ".jdks"), ["bin", "java"]),
  ].filter(Boolean);
  const seen = [];
  for (const c of candidates) {
    if (c !== "java" && !existsSync(c)) continue;
    const v = javaVersion(c);
    if (v >= 21) return c;
    seen.push(`${c} (${v || "does not run"})`);
  }
  throw new Error("no Java 21 or newer found to run the IQ-Stream server; looked at $IQSTREAM_JAVA, $JAVA_HOME, "
    + `java on the PATH, /usr/lib/jvm, /opt/java, ~/.sdkman, ~/.jdks (found: ${seen.join(", ") || "none"}). `
    + "Install one (e.g. apt-get install openjdk-21-jdk-headless) or set JAVA_HOME or IQSTREAM_JAVA.");
}

let java;
/** A JDK >= 21 (see findJava), looked for once, when the first server starts. */
export function JAVA() {
  java ??= findJava();
  return java;
}

/**
 * Starts the server on an ephemeral loopback port and waits for its listening line.
 * @param {string[]} [flags]  extra flags, e.g. ["--retention", "300ms"]
 */
export async function startServer(flags = [], { secret: sharedSecret } = {}) {
  if (!existsSync(JAR)) {
    throw new Error(`IQ-Stream jar not found at ${JAR}: build it (../../iqstream build, or mvn -pl server -am package) or set IQSTREAM_JAR`);
  }
  const secret = sharedSecret ?? randomBytes(32).toString("hex"); // 64 bytes of UTF-8
  const port0 = flags.includes("--port") ? [] : ["--port", "0"]; // a cluster node names its own port
  const args = ["-jar", JAR, "serve", "--host", "127.0.0.1", ...port0, "--jwt-secret", secret, ...flags];
  const child = spawn(JAVA(), args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`server did not print its listening line in 60 s:\n${output}`)), 60_000);
    const fail = (err) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(err);
    };
    const onData = (chunk) => {
      output += chunk.toString();
      const match = /listening on http:\/\/[^:\s]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (c) => { output += c.toString(); });
    child.on("error", fail);
    child.on("exit", (code) => fail(new Error(`server exited (${code}) before listening:\n${output}`)));
  });
  // keep draining the pipes so the server never blocks on a full one
  child.stdout.removeAllListeners("data");
  child.stdout.on("data", () => {});
  child.stderr.removeAllListeners("data");
  child.stderr.on("data", () => {});
  child.removeAllListeners("exit");
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    port,
    baseUrl,
    secret,
    /** @param {Record<string, unknown>} rights e.g. { subscribe: ["run-1"] } */
    token: (rights, extraClaims = {}) => mintToken(secret, { iqstream: rights, ...extraClaims }),
    async stop() {
      // a process killed by a signal has no exit code, only a signal code: stopping it again must not wait
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * An HS256 JWT, valid for 10 minutes unless claims say otherwise.
 * @param {string} secret
 * @param {Record<string, unknown>} claims
 */
export function mintToken(secret, claims) {
  const b64 = (obj) => Buffer.from(JSON.stringify(obj)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: "HS256", typ: "JWT" });
  const body = b64({ sub: "test", iat: now, exp: now + 600, ...claims });
  const sig = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${head}.${body}`).digest("base64url");
  return `${head}.${body}.${sig}`;
}

/** A unique, valid run id. */
export function newRunId(prefix = "run") {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

/**
 * Publishes events in one request (application/x-ndjson) and returns the server's reply.
 * @param {{ baseUrl: string, token: (r: any) => string }} server
 */
export async function publishAll(server, runId, events) {
  const response = await fetch(`${server.baseUrl}/v1/runs/${runId}/events`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-ndjson",
      Authorization: `Bearer ${server.token({ publish: [runId] })}`,
    },
    body: events.map((e) => JSON.stringify(e)).join("\n") + "\n",
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`publish answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/**
 * Streams events into a run over one chunked POST, one event per chunk, `gapMs` apart.
 * `waitBefore(index)` may return a promise to hold the publisher before an event.
 * Resolves with the server's reply when the run is published.
 */
export function publishStreaming(server, runId, events, { gapMs = 5, waitBefore } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.baseUrl}/v1/runs/${runId}/events`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-ndjson",
        Authorization: `Bearer ${server.token({ publish: [runId] })}`,
      },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c) => { body += c; });
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`publish ${res.statusCode}: ${body}`))));
    });
    req.on("error", reject);
    (async () => {
      for (let i = 0; i < events.length; i++) {
        if (waitBefore) await waitBefore(i);
        req.write(JSON.stringify(events[i]) + "\n");
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      }
      req.end();
    })().catch(reject);
  });
}

/**
 * A TCP proxy in front of the server; cut() destroys every open connection (both sides),
 * as a network drop does.
 */
export async function startProxy(targetPort) {
  let target = targetPort;
  const sockets = new Set();
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(target, "127.0.0.1");
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
    client.on("error", close);
    upstream.on("error", close);
    client.on("close", close);
    upstream.on("close", close);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    get connections() { return connections; },
    /** New connections go to `port` from now on (a balancer whose node died). */
    retarget(port) { target = port; },
    cut() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    async close() {
      this.cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resolves when predicate() is true, polling every 10 ms; rejects after timeoutMs. */
export async function waitFor(predicate, timeoutMs = 10_000, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A fetch that counts its calls (to prove errors are not retried). */
export function countingFetch() {
  const calls = [];
  const fn = (url, init) => {
    calls.push({ url: String(url), headers: { ...(init?.headers ?? {}) } });
    return fetch(url, init);
  };
  fn.calls = calls;
  return fn;
}

/** A one-shot latch: open() releases everyone waiting on wait(). */
export function latch() {
  let open;
  const promise = new Promise((r) => { open = r; });
  return { open: () => open(), wait: () => promise };
}

/** A free loopback port (a cluster node must name its own before it starts). */
export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/** A metric's value from a server's /metrics on `port`; -1 when absent or the server does not answer. */
export async function metric(port, name) {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : -1;
  } catch {
    return -1;
  }
}
