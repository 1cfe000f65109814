// With @opentelemetry/api installed and a propagator and context manager registered (as an SDK does), the
// publishers send the active span's W3C traceparent; with no active span they send none. Against a real local
// HTTP server that records the headers it receives.
import assert from "node:assert/strict";
import http from "node:http";
import { AsyncLocalStorage } from "node:async_hooks";
import { after, before, test } from "node:test";
import * as api from "@opentelemetry/api";
import { RunPublisher, publishEvents } from "../src/publisher.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN_ID = "00f067aa0ba902b7";
let server;
let baseUrl;
const seen = [];

/** A context manager over AsyncLocalStorage, as @opentelemetry/context-async-hooks provides. */
class StorageContextManager {
  constructor() { this.storage = new AsyncLocalStorage(); }
  active() { return this.storage.getStore() ?? api.ROOT_CONTEXT; }
  with(context, fn, thisArg, ...args) { return this.storage.run(context, () => fn.call(thisArg, ...args)); }
  bind(_context, target) { return target; }
  enable() { return this; }
  disable() { return this; }
}

/** The W3C trace-context propagator's inject, as @opentelemetry/core's W3CTraceContextPropagator writes it. */
const traceContext = {
  inject(context, carrier, setter) {
    const sc = api.trace.getSpanContext(context);
    if (!sc || !api.isSpanContextValid(sc)) return;
    setter.set(carrier, "traceparent", `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags}`);
  },
  extract(context) { return context; },
  fields() { return ["traceparent"]; },
};

before(async () => {
  api.context.setGlobalContextManager(new StorageContextManager());
  api.propagation.setGlobalPropagator(traceContext);
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ runId: "r", lastEventId: 1, ended: true }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${server.address().port}`;
});
after(() => { server.close(); api.context.disable(); api.propagation.disable(); });

const active = api.trace.setSpanContext(api.ROOT_CONTEXT,
  { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: api.TraceFlags.SAMPLED, isRemote: false });

test("RunPublisher sends the active span's traceparent", async () => {
  seen.length = 0;
  await api.context.with(active, async () => {
    const p = new RunPublisher({ baseUrl, runId: "r" }).open();
    p.send({ type: "RUN_STARTED", threadId: "t", runId: "r" });
    await p.end();
  });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].traceparent, `00-${TRACE_ID}-${SPAN_ID}-01`);
});

test("publishEvents sends it too, and nothing is sent outside a span", async () => {
  seen.length = 0;
  await api.context.with(active, () => publishEvents({ baseUrl, runId: "r" }, [{ type: "RUN_STARTED" }]));
  await publishEvents({ baseUrl, runId: "r" }, [{ type: "RUN_STARTED" }]);
  assert.equal(seen.length, 2);
  assert.equal(seen[0].traceparent, `00-${TRACE_ID}-${SPAN_ID}-01`);
  assert.equal(seen[1].traceparent, undefined);
});
