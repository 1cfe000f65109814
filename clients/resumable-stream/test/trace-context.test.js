// With @opentelemetry/api installed and a context manager and propagator registered (as an SDK does), every request
// the package makes to IQ-Stream (the producer's POST, its status requests, a resume's read) carries the active
// span's W3C traceparent and the active baggage; with no active span it carries none. The headers are recorded by a
// real HTTP proxy in front of the real server (node:http, each request forwarded as it comes, bodies streamed both
// ways), so the stream works end to end through it.
import assert from "node:assert/strict";
import http from "node:http";
import { AsyncLocalStorage } from "node:async_hooks";
import { after, before, test } from "node:test";
import * as api from "@opentelemetry/api";
import { createResumableStreamContext } from "@iqstream/resumable-stream";
import { startServer, waitFor } from "./support.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

/** A context manager over AsyncLocalStorage, as @opentelemetry/context-async-hooks provides. */
class StorageContextManager {
  constructor() { this.storage = new AsyncLocalStorage(); }
  active() { return this.storage.getStore() ?? api.ROOT_CONTEXT; }
  with(context, fn, thisArg, ...args) { return this.storage.run(context, () => fn.call(thisArg, ...args)); }
  bind(_context, target) { return target; }
  enable() { return this; }
  disable() { return this; }
}

/** W3C trace context and baggage, as @opentelemetry/core's W3CTraceContextPropagator and W3CBaggagePropagator write them. */
const w3c = {
  inject(context, carrier, setter) {
    const sc = api.trace.getSpanContext(context);
    if (sc && api.isSpanContextValid(sc)) setter.set(carrier, "traceparent", `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags}`);
    const baggage = api.propagation.getBaggage(context);
    if (baggage) {
      const entries = baggage.getAllEntries().map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.value)}`);
      if (entries.length > 0) setter.set(carrier, "baggage", entries.join(","));
    }
  },
  extract(context) { return context; },
  fields() { return ["traceparent", "baggage"]; },
};

/** An HTTP proxy to `targetPort` that records each request's method, path and headers. */
async function startRecordingProxy(targetPort) {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push({ line: `${req.method} ${decodeURIComponent(req.url)}`, headers: req.headers });
    const upstream = http.request({ host: "127.0.0.1", port: targetPort, method: req.method, path: req.url,
      headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** The requests recorded from now on. */
    mark() { const from = requests.length; return () => requests.slice(from); },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

let server;
let proxy;
let ctx;
before(async () => {
  api.context.setGlobalContextManager(new StorageContextManager());
  api.propagation.setGlobalPropagator(w3c);
  server = await startServer();
  proxy = await startRecordingProxy(server.port);
  const token = server.token({ publish: ["resumable-stream:*"], subscribe: ["resumable-stream:*"] });
  ctx = createResumableStreamContext({ waitUntil: null, url: proxy.url, token });
});
after(async () => {
  await proxy?.close();
  await server?.stop();
  api.context.disable();
  api.propagation.disable();
});

const active = api.propagation.setBaggage(
  api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: api.TraceFlags.SAMPLED, isRemote: false }),
  api.propagation.createBaggage({ tenant: { value: "acme" } }));
const id = () => `tc${Math.random().toString(36).slice(2)}`;

/** A source of a start frame, `n` deltas 10 ms apart, and [DONE] once `hold` resolves. */
function source(n, hold) {
  let i = 0;
  return () => new ReadableStream({
    async pull(c) {
      await new Promise((r) => setTimeout(r, 10));
      if (i === 0) c.enqueue('data: {"type":"start"}\n\n');
      else if (i <= n) c.enqueue(`data: {"type":"text-delta","id":"t","delta":"w${i}"}\n\n`);
      else {
        await hold;
        c.enqueue("data: [DONE]\n\n");
        c.close();
      }
      i++;
    },
  });
}

async function readAll(stream) {
  let out = "";
  for await (const s of stream) out += s;
  return out;
}

test("the producer's POST, its status requests and a resume's read send the active span's traceparent and baggage", async () => {
  const streamId = id();
  const requests = proxy.mark();
  let release;
  const hold = new Promise((r) => { release = r; });
  const [own, resumed] = await api.context.with(active, async () => {
    const produced = readAll(await ctx.createNewResumableStream(streamId, source(5, hold)));
    const again = await ctx.resumeExistingStream(streamId);
    assert.ok(again, "the stream in flight resumes");
    release();
    return [await produced, await readAll(again)];
  });
  assert.equal(resumed, own, "the stream went through the proxy whole");
  const seen = requests();
  const run = `/v1/runs/resumable-stream:${streamId}`;
  const lines = seen.map((r) => r.line).join("; ");
  assert.ok(seen.some((r) => r.line === `POST ${run}/events`), lines);
  assert.ok(seen.some((r) => r.line === `GET ${run}`), lines);
  assert.ok(seen.some((r) => r.line === `GET ${run}/events?ifRunning=true`), lines);
  for (const r of seen) {
    assert.equal(r.headers.traceparent, TRACEPARENT, `${r.line} carries the traceparent`);
    assert.equal(r.headers.baggage, "tenant=acme", `${r.line} carries the baggage`);
  }
});

test("outside a span nothing is added", async () => {
  const streamId = id();
  const requests = proxy.mark();
  const own = readAll(await ctx.createNewResumableStream(streamId, source(2, Promise.resolve())));
  await own;
  await waitFor(async () => await ctx.hasExistingStream(streamId) === "DONE", 10_000, "the stream's end");
  const seen = requests();
  assert.ok(seen.some((r) => r.line.startsWith("POST ")), seen.map((r) => r.line).join("; "));
  for (const r of seen) {
    assert.equal(r.headers.traceparent, undefined, r.line);
    assert.equal(r.headers.baggage, undefined, r.line);
  }
});
