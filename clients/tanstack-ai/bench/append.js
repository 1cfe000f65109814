// How to publish a TanStack run: measured, not guessed. Two mechanisms, each one producer appending one chunk
// at a time and waiting until IQ-Stream holds it (what TanStack's append contract asks: the offset is known
// before the chunk is delivered):
//   per-batch  a POST per append, continued with Last-Event-ID (what iqstreamStream does; the answer carries
//              the ids)
//   streaming  one chunked NDJSON POST held open for the run; a write carries no answer, so the append is known
//              held when a subscriber on the run reads it back (the only ack a streaming body has)
// Also per-batch with node:http instead of fetch (how much is the client), and with 32 chunks per append
// (TanStack's default batch). Closed loop, one producer: the latency is
// of one append with nothing queued behind it (no coordinated omission to correct), the rate its inverse.
//   node bench/append.js [appends per case, default 2000]
// Starts its own IQ-Stream (the server jar, as the tests do) on loopback.
import http from "node:http";
import { startServer } from "../../js/test/support.js";
import { iqstreamStream } from "../src/index.js";

const N = Number(process.argv[2] ?? 2000);
const chunk = (i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `word${i} `, timestamp: 1764500000000 + i });

function summary(name, latenciesUs, chunks, wallMs) {
  const s = [...latenciesUs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { name, appends: s.length, chunks, appendsPerS: Math.round(s.length / (wallMs / 1000)),
    chunksPerS: Math.round(chunks / (wallMs / 1000)), p50Us: q(0.5), p90Us: q(0.9), p99Us: q(0.99), maxUs: s.at(-1) };
}

async function perBatch(iq, token, batch) {
  const d = iqstreamStream({ runId: `bench-pb${batch}-${Date.now()}` }, { url: iq.baseUrl, token });
  const lat = [];
  for (let i = 0; i < 500; i++) await d.append([chunk(i)]); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const a = performance.now();
    await d.append(Array.from({ length: batch }, (_, k) => chunk(i * batch + k)));
    lat.push(Math.round((performance.now() - a) * 1000));
  }
  const wall = performance.now() - t0;
  await d.append([{ type: "RUN_FINISHED", runId: "r", threadId: "t" }]);
  await d.close();
  return summary(`per-batch (POST per append, ${batch} chunk${batch > 1 ? "s" : ""})`, lat, N * batch, wall);
}

/** per-batch as iqstreamStream does it, with node:http and a keep-alive agent instead of fetch (the client's share). */
async function perBatchNodeHttp(iq, token) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const runId = `tsa.bench-pbh-${Date.now()}`;
  let last = 0;
  const post = (line) => new Promise((resolve, reject) => {
    const req = http.request(`${iq.baseUrl}/v1/runs/${runId}/events`, {
      method: "POST",
      agent,
      headers: { "Content-Type": "application/x-ndjson", Authorization: `Bearer ${token}`, "Last-Event-ID": String(last), "X-IQStream-Publisher-Lease": "5s" },
    }, (res) => {
      let body = "";
      res.on("data", (c) => { body += c; });
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(body));
        last = JSON.parse(body).lastEventId;
        resolve();
      });
    });
    req.on("error", reject);
    req.end(`${line}\n`);
  });
  for (let i = 0; i < 500; i++) await post(JSON.stringify(chunk(i))); // warm-up
  const lat = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const a = performance.now();
    await post(JSON.stringify(chunk(i)));
    lat.push(Math.round((performance.now() - a) * 1000));
  }
  const wall = performance.now() - t0;
  await post(JSON.stringify({ type: "RUN_FINISHED", runId: "r", threadId: "t" }));
  agent.destroy();
  return summary("per-batch, node:http keep-alive (1 chunk)", lat, N, wall);
}

async function streaming(iq, token) {
  const runId = `tsa.bench-st-${Date.now()}`;
  const req = http.request(`${iq.baseUrl}/v1/runs/${runId}/events`, {
    method: "POST",
    headers: { "Content-Type": "application/x-ndjson", Authorization: `Bearer ${token}`, "X-IQStream-Publisher-Lease": "5s" },
  });
  req.on("error", () => {});
  const answered = new Promise((r) => req.on("response", (res) => { res.resume(); res.on("end", r); }));
  req.setNoDelay(true);
  // the ack channel: a subscriber on the run, resolving waiters as ids arrive
  const waiters = new Map();
  let seen = 0;
  req.write(`${JSON.stringify(chunk(0))}\n`);
  const sub = await fetch(`${iq.baseUrl}/v1/runs/${runId}/events`, { headers: { Authorization: `Bearer ${token}` } });
  const reader = sub.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let at;
      while ((at = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const m = /^id: (\d+)$/m.exec(frame);
        if (m) {
          seen = Number(m[1]);
          waiters.get(seen)?.();
          waiters.delete(seen);
        }
      }
    }
  })();
  let next = 1;
  const append = (c) => {
    next++;
    const id = next;
    const held = new Promise((r) => waiters.set(id, r));
    req.write(`${JSON.stringify(c)}\n`);
    return held;
  };
  for (let i = 0; i < 500; i++) await append(chunk(i)); // warm-up
  const lat = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const a = performance.now();
    await append(chunk(i));
    lat.push(Math.round((performance.now() - a) * 1000));
  }
  const wall = performance.now() - t0;
  req.end(`${JSON.stringify({ type: "RUN_FINISHED", runId: "r", threadId: "t" })}\n`);
  await answered;
  await reader.cancel().catch(() => {});
  return summary("streaming (one open POST, ack by read-back)", lat, N, wall);
}

const iq = await startServer([]); // with its JIT warm-up, as in production
try {
  const token = iq.token({ publish: ["tsa.*"], subscribe: ["tsa.*"] });
  const rows = [];
  for (const run of [() => perBatch(iq, token, 1), () => perBatchNodeHttp(iq, token), () => streaming(iq, token), () => perBatch(iq, token, 32)]) rows.push(await run());
  console.log(`node ${process.version}, ${N} appends per case, one producer, loopback`);
  console.table(rows);
} finally {
  await iq.stop();
}
