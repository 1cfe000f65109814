// With @opentelemetry/api installed and a context manager and propagator registered (as an SDK does), every request
// iqstreamStream makes to IQ-Stream carries the active span's W3C traceparent and the active baggage; with no
// active span it carries none. The headers are recorded by a real HTTP proxy in front of the real server
// (node:http, each request forwarded as it comes), so the run works end to end through it.
import assert from "node:assert/strict";
import http from "node:http";
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import * as api from "@opentelemetry/api";
import { iqstreamStream } from "../src/index.js";
import { startServer } from "./support.js";

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

let iq;
let proxy;
let token;
before(async () => {
  api.context.setGlobalContextManager(new StorageContextManager());
  api.propagation.setGlobalPropagator(w3c);
  iq = await startServer([]);
  proxy = await startRecordingProxy(iq.port);
  token = iq.token({ publish: ["tsa.*"], subscribe: ["tsa.*"] });
});
after(async () => {
  await proxy?.close();
  await iq?.stop();
  api.context.disable();
  api.propagation.disable();
});

const active = api.propagation.setBaggage(
  api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: api.TraceFlags.SAMPLED, isRemote: false }),
  api.propagation.createBaggage({ tenant: { value: "acme" } }));
const newRun = () => `tc-${randomBytes(5).toString("hex")}`;
const open = (runId) => iqstreamStream({ runId }, { url: proxy.url, token });
const chunk = (i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `w${i} `, timestamp: 1000 + i });
const finished = { type: "RUN_FINISHED", runId: "r", threadId: "t", timestamp: 2000 };
async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x.chunk);
  return out;
}

test("append, snapshot, read and close send the active span's traceparent and baggage", async () => {
  const runId = newRun();
  const requests = proxy.mark();
  const read = await api.context.with(active, async () => {
    const d = open(runId);
    await d.append([chunk(1)]);
    await d.append([chunk(2), finished]);
    await d.close();
    await d.snapshot();
    return collect(open(runId).read("-1"));
  });
  assert.deepEqual(read, [chunk(1), chunk(2), finished], "the run went through the proxy whole");
  const seen = requests();
  const iqRun = `tsa.${runId}`;
  assert.ok(seen.filter((r) => r.line === `POST /v1/runs/${iqRun}/events`).length >= 2, seen.map((r) => r.line).join("; "));
  assert.ok(seen.some((r) => r.line.startsWith(`GET /v1/runs/${iqRun}/events`)), seen.map((r) => r.line).join("; "));
  for (const r of seen) {
    assert.equal(r.headers.traceparent, TRACEPARENT, `${r.line} carries the traceparent`);
    assert.equal(r.headers.baggage, "tenant=acme", `${r.line} carries the baggage`);
  }
});

test("outside a span nothing is added", async () => {
  const runId = newRun();
  const requests = proxy.mark();
  const d = open(runId);
  await d.append([chunk(1), finished]);
  await d.close();
  const seen = requests();
  assert.ok(seen.length >= 1);
  for (const r of seen) {
    assert.equal(r.headers.traceparent, undefined, r.line);
    assert.equal(r.headers.baggage, undefined, r.line);
  }
});
