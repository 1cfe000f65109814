// The AI SDK bench: the workload's run shape as UI message chunks (workload.js), K chats in flight, each POSTed
// to app instance A and read by its "browser" (this process) from the POST's own response; one browser in ten
// drops mid-answer, waits 1 s and resumes on instance B (the docs' GET route, a replay from the first chunk, as
// useChat does after a reload). Rows, one after another in one run:
//   iqstream  the copy for resumability through @iqstream/resumable-stream into IQ-Stream
//   iqstream-base  the same with another build: the package at BASE_PACKAGE (its src/index.js), the server jar
//             BASE_JAR (default IQSTREAM_JAR), e.g. main's, to compare before and after in one run; with
//             BASE_ARGS against IQSTREAM_ARGS, one build under two settings (e.g. --warmup)
//   redis     the copy through the original resumable-stream into Debian's redis-server
//   none      no resumability: the app streams straight to the browser (no resume possible)
// Per row: events delivered, CPU per event of the whole path (apps A and B plus IQ-Stream or Redis, from /proc),
// resume time (reconnect request to first chunk), lost chunks on resume, Redis commands per token.
//   K (20), WINDOW_S (30), WARMUP_S (10: the shortest warm-up), WARMUP_MAX_S (180: the longest), ROWS
//   (iqstream,redis,none), REPEAT (1: passes over the rows, one after another), IQSTREAM_JAR, IQSTREAM_JAVA,
//   REDIS_SERVER, BASE_PACKAGE, BASE_JAR, IQSTREAM_ARGS (more `serve` flags for the iqstream row, split at
//   spaces), BASE_ARGS (the same for iqstream-base; default IQSTREAM_ARGS).
//   PROFILE_DIR: profiles each row's window there: the apps with node --cpu-prof (app-<row>-<pass>-*.cpuprofile),
//   IQ-Stream with perf record -F 999 -g (perf-<row>-<pass>.data, the JIT's symbols in /tmp/perf-<pid>.map from
//   jcmd Compiler.perfmap; the server runs with -XX:+PreserveFramePointer). Profiled figures are not the bench's.
import { spawn } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CHUNKS } from "./workload.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const K = Number(process.env.K ?? 20);
const WINDOW_S = Number(process.env.WINDOW_S ?? 30);
const WARMUP_S = Number(process.env.WARMUP_S ?? 10);
const WARMUP_MAX_S = Math.max(WARMUP_S, Number(process.env.WARMUP_MAX_S ?? 180));
const SLICE_S = 5; // the warm-up past WARMUP_S goes on in slices of this length until the row's CPU settles
const ROWS = (process.env.ROWS ?? "iqstream,redis,none").split(",");
const KNOWN_ROWS = ["iqstream", "iqstream-base", "redis", "none"];
for (const row of ROWS) {
  if (!KNOWN_ROWS.includes(row)) {
    console.error(`bench/aisdk: unknown row ${JSON.stringify(row)} in ROWS (rows: ${KNOWN_ROWS.join(", ")})`);
    process.exit(2);
  }
}
if (ROWS.includes("iqstream-base") && !process.env.BASE_PACKAGE) {
  // else each app fails at its import as "Cannot find package 'undefined'", after the servers have started
  console.error("bench/aisdk: the iqstream-base row needs BASE_PACKAGE, the absolute path of the other build's "
    + "clients/resumable-stream/src/index.js (README.md)");
  process.exit(2);
}
const REPEAT = Number(process.env.REPEAT ?? 1);
const PROFILE_DIR = process.env.PROFILE_DIR;
const JAR = process.env.IQSTREAM_JAR ?? path.join(here, "../../server/target/iqstream-server.jar");
const BASE_JAR = process.env.BASE_JAR ?? JAR;
const JAVA = process.env.IQSTREAM_JAVA ?? "java";
const flags = (v) => (v ?? "").split(" ").filter((f) => f !== "");
const IQSTREAM_ARGS = flags(process.env.IQSTREAM_ARGS);
const BASE_ARGS = process.env.BASE_ARGS === undefined ? IQSTREAM_ARGS : flags(process.env.BASE_ARGS);
const REDIS = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";
const TICK = 100; // USER_HZ on Linux

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// utime + stime of a /proc stat line (a process's or a thread's), in seconds
function statSeconds(stat) {
  const parts = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(parts[11]) + Number(parts[12])) / TICK;
}

function cpuSeconds(pid) {
  return statSeconds(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

// CPU seconds of a JVM's JIT compiler threads (C1 and C2), from /proc/<pid>/task/*/stat; 0 for other processes
function compilerSeconds(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let f;
    try { f = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8"); } catch { continue; } // a thread gone
    if (/\((C1|C2) CompilerThre/.test(f)) total += statSeconds(f);
  }
  return total;
}

function startProcess(cmd, args, env, ready) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} not ready in 60 s:\n${out}`)), 60_000);
    const on = (c) => {
      out += c;
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.removeAllListeners("data");
        child.stderr.removeAllListeners("data");
        child.stdout.on("data", () => {});
        child.stderr.on("data", (d) => process.stderr.write(d));
        resolve({ child, match: m, pid: child.pid,
          stop: (signal = "SIGKILL") => new Promise((r) => { child.once("exit", r); child.kill(signal); }) });
      }
    };
    child.stdout.on("data", on);
    child.stderr.on("data", on);
    child.once("exit", (code) => { clearTimeout(timer); reject(new Error(`${cmd} exited ${code}:\n${out}`)); });
  });
}

function b64url(s) {
  return Buffer.from(s).toString("base64url");
}
function jwt(secret, claims) {
  const head = b64url(JSON.stringify({ alg: "HS256" }));
  const body = b64url(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 }));
  return `${head}.${body}.${createHmac("sha256", secret).update(`${head}.${body}`).digest("base64url")}`;
}

function redisCommands(port) {
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

/** Reads an SSE response body, calling onData(data) per event; resolves when it ends. */
async function readSse(res, onData, signal) {
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for await (const bytes of res.body) {
      buf += decoder.decode(bytes, { stream: true });
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        for (const line of frame.split("\n")) if (line.startsWith("data: ")) onData(line.slice(6));
      }
    }
  } catch (e) {
    if (!signal?.aborted) throw e;
  }
}

async function runRow(row, pass) {
  const procs = [];
  let env = { ROW: row };
  let redisPort;
  let iqPid;
  if (row === "iqstream" || row === "iqstream-base") {
    const secret = randomBytes(32).toString("hex");
    const iq = await startProcess(JAVA, [...(PROFILE_DIR ? ["-XX:+PreserveFramePointer"] : []), "-jar",
      row === "iqstream-base" ? BASE_JAR : JAR, "serve", "--host", "127.0.0.1", "--port", "0",
      "--jwt-secret", secret, ...(row === "iqstream-base" ? BASE_ARGS : IQSTREAM_ARGS)], {},
      /listening on http:\/\/[^:\s]+:(\d+)/);
    procs.push(iq);
    iqPid = iq.pid;
    env = { ...env, IQSTREAM_URL: `http://127.0.0.1:${iq.match[1]}`,
      IQSTREAM_TOKEN: jwt(secret, { iqstream: { publish: ["resumable-stream:*"], subscribe: ["resumable-stream:*"] } }) };
  } else if (row === "redis") {
    redisPort = 20000 + Math.floor(Math.random() * 12000);
    procs.push(await startProcess(REDIS, ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "",
      "--appendonly", "no"], {}, /Ready to accept connections/));
    env = { ...env, REDIS_URL: `redis://127.0.0.1:${redisPort}` };
  }
  const node = (name) => [...(PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR,
    "--cpu-prof-name", `app-${row}-${pass}-${name}.cpuprofile`] : []), path.join(here, "app.js")];
  const a = await startProcess(process.execPath, node("A"), env, /listening (\d+)/);
  const b = await startProcess(process.execPath, node("B"), env, /listening (\d+)/);
  procs.push(a, b);
  const A = `http://127.0.0.1:${a.match[1]}`;
  const B = `http://127.0.0.1:${b.match[1]}`;

  const stats = { delivered: 0, runsDone: 0, runsExpected: 0, runsSeen: 0, resumes: [], lost: 0, errors: 0, tokens: 0 };
  let measuring = false;
  let stopping = false;

  async function oneRun(drop) {
    const chatId = randomUUID().replaceAll("-", "").slice(0, 16);
    const streamId = randomUUID().replaceAll("-", "").slice(0, 16);
    const counted = measuring;
    const seen = new Set();
    const abort = new AbortController();
    const dropAt = drop ? 20 + Math.floor(Math.random() * (CHUNKS - 60)) : Infinity;
    let n = 0;
    const res = await fetch(`${A}/api/chat/${chatId}/${streamId}`, { method: "POST", body: "{}", signal: abort.signal });
    await readSse(res, (data) => {
      if (data === "[DONE]") return;
      n++;
      seen.add(n);
      stats.delivered++;
      if (measuring && data.startsWith('{"type":"text-delta"')) stats.tokens++;
      if (n >= dropAt) abort.abort();
    }, abort.signal);
    if (drop && row !== "none") {
      await sleep(1000);
      const t0 = performance.now();
      const again = await fetch(`${B}/api/chat/${chatId}/stream/${streamId}`);
      let first = true;
      let m = 0;
      await readSse(again, (data) => {
        if (first) { first = false; if (measuring) stats.resumes.push(performance.now() - t0); }
        if (data === "[DONE]") return;
        m++;
        if (!seen.has(m)) { seen.add(m); stats.delivered++; }
      });
    }
    if (counted && measuring) {
      stats.runsDone++;
      stats.runsExpected += CHUNKS;
      stats.runsSeen += seen.size;
      stats.lost += drop && row !== "none" ? CHUNKS - seen.size : 0;
    }
  }

  const loops = [];
  for (let i = 0; i < K; i++) {
    loops.push((async () => {
      await sleep(Math.random() * 10_000); // starts spread over about one run
      let r = 0;
      while (!stopping) {
        try {
          await oneRun((i * 7 + r++) % 10 === 0);
        } catch (e) {
          stats.errors++;
          if (stats.errors < 5) console.error(`${row}: ${e.message}`);
        }
      }
    })());
  }
  const pids = procs.map((p) => p.pid);
  const warm = await warmUp(pids, iqPid, stats);
  const cpu0 = pids.map(cpuSeconds);
  const delivered0 = stats.delivered;
  const redis0 = redisPort ? await redisCommands(redisPort) : 0;
  measuring = true;
  const t0 = performance.now();
  const perf = PROFILE_DIR && iqPid ? spawn("perf", ["record", "-F", "999", "-g", "-p", String(iqPid), "-o",
    path.join(PROFILE_DIR, `perf-${row}-${pass}.data`), "--", "sleep", String(WINDOW_S)], { stdio: "ignore" }) : null;
  await sleep(WINDOW_S * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const cpuEach = pids.map((pid, i) => cpuSeconds(pid) - cpu0[i]);
  const cpu = cpuEach.reduce((x, y) => x + y, 0);
  const redisCmds = redisPort ? (await redisCommands(redisPort)) - redis0 : 0;
  const delivered = stats.delivered - delivered0;
  measuring = false;
  stopping = true;
  await Promise.race([Promise.all(loops), sleep(20_000)]);
  if (perf) {
    if (perf.exitCode === null) await new Promise((r) => perf.once("exit", r));
    await new Promise((r) => spawn("jcmd", [String(iqPid), "Compiler.perfmap"], { stdio: "ignore" }).once("exit", r));
  }
  // the apps exit on SIGTERM when profiled, so that node writes their profiles
  // the apps first (they hold connections to the store), then IQ-Stream or Redis
  await Promise.all([a, b].map((p) => p.stop(PROFILE_DIR ? "SIGTERM" : "SIGKILL")));
  await Promise.all(procs.filter((p) => p !== a && p !== b).map((p) => p.stop()));
  const sorted = stats.resumes.sort((x, y) => x - y);
  const pct = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(1) : "-");
  return {
    row, pass, k: K, warmupS: warm.seconds.toFixed(0), settled: warm.settled, seconds: seconds.toFixed(1), eventsPerS: (delivered / seconds).toFixed(0),
    // of the runs that started and ended inside the window: chunks the browser got / chunks the run has
    deliveredPct: stats.runsExpected ? ((100 * stats.runsSeen) / stats.runsExpected).toFixed(1) : "-",
    runs: stats.runsDone,
    cpuUsPerEvent: ((cpu * 1e6) / delivered).toFixed(1), cpuCores: (cpu / seconds).toFixed(2),
    // per process, in µs per delivered event: [IQ-Stream or Redis,] app A (producer), app B (resumes)
    cpuUsPerEventEach: cpuEach.map((c) => ((c * 1e6) / delivered).toFixed(1)).join(" + "),
    resumeP50Ms: pct(0.5), resumeP99Ms: pct(0.99), resumes: sorted.length,
    lost: row === "none" ? "-" : stats.lost, errors: stats.errors,
    redisCommandsPerToken: redisPort ? (redisCmds / Math.max(1, stats.tokens)).toFixed(2) : "-",
  };
}

/**
 * The warm-up, as the main bench's (docs/BENCHMARK.md): at least WARMUP_S, then slices of SLICE_S until two
 * successive slices' CPU per event of the whole path (every process of the row) are within 5% of each other and a
 * JVM server's compiler threads took at most 2% of its CPU in the last slice; at most WARMUP_MAX_S. Without it an
 * AI SDK row at K = 20 counted the JIT's tail in its window (docs/bench/aisdk/README.md, "the JIT inside the window").
 */
async function warmUp(pids, jvmPid, stats) {
  const start = performance.now();
  await sleep(WARMUP_S * 1000);
  const reading = () => ({ cpu: pids.map(cpuSeconds).reduce((x, y) => x + y, 0),
    server: jvmPid ? cpuSeconds(jvmPid) : 0, jit: jvmPid ? compilerSeconds(jvmPid) : 0, events: stats.delivered });
  let last = reading();
  let previousPerEvent = null;
  while ((performance.now() - start) / 1000 + SLICE_S <= WARMUP_MAX_S) {
    await sleep(SLICE_S * 1000);
    const now = reading();
    const perEvent = (now.cpu - last.cpu) / Math.max(1, now.events - last.events);
    const jitShare = jvmPid ? (now.jit - last.jit) / Math.max(0.01, now.server - last.server) : 0;
    last = now;
    const settled = previousPerEvent !== null && Math.abs(perEvent - previousPerEvent) <= 0.05 * previousPerEvent
      && jitShare <= 0.02;
    previousPerEvent = perEvent;
    if (settled) return { seconds: (performance.now() - start) / 1000, settled: true };
  }
  return { seconds: (performance.now() - start) / 1000, settled: false };
}

const results = [];
for (let pass = 1; pass <= REPEAT; pass++) {
  for (const row of ROWS) {
    console.error(`# row ${row}, pass ${pass} of ${REPEAT}: K=${K}, warm-up ${WARMUP_S}-${WARMUP_MAX_S} s, `
      + `window ${WINDOW_S} s`);
    results.push(await runRow(row, pass));
    console.error(JSON.stringify(results.at(-1)));
  }
}
console.log("| row | pass | K | warm-up s | runs | delivered | events/s delivered | CPU µs per event (apps + IQ-Stream/Redis) | of which: [IQ-Stream/Redis +] A + B | CPU cores | resume p50 / p99 ms | resumes | lost | Redis commands per token | errors |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of results) {
  console.log(`| ${r.row} | ${r.pass} | ${r.k} | ${r.warmupS}${r.settled ? "" : " †"} | ${r.runs} | ${r.deliveredPct}% | ${r.eventsPerS} | ${r.cpuUsPerEvent} | ${r.cpuUsPerEventEach} | ${r.cpuCores} | ${r.resumeP50Ms} / ${r.resumeP99Ms} | ${r.resumes} | ${r.lost} | ${r.redisCommandsPerToken} | ${r.errors} |`);
}
if (results.some((r) => !r.settled)) {
  console.log(`\n† the warm-up reached WARMUP_MAX_S (${WARMUP_MAX_S} s) with the row's CPU per event unsettled.`);
}
