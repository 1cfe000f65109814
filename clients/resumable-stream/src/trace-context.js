/**
 * The active OpenTelemetry context, as W3C `traceparent` (and `baggage`) headers on each request to IQ-Stream, so
 * the app's trace continues through IQ-Stream (its span of a publish or a read is a child of the caller's active
 * span). As @iqstream/client's publisher does.
 *
 * `@opentelemetry/api` is an optional peer dependency: when it is not installed this adds nothing, and when it is
 * installed without an SDK (no propagator registered) its `inject` adds nothing either.
 */
let api = null;
try {
  api = await import("@opentelemetry/api");
} catch {
  api = null; // not installed: no propagation
}

/** Adds the active context's propagation headers to `headers` (a plain object) and returns it. */
export function withTraceContext(headers) {
  if (api) api.propagation.inject(api.context.active(), headers);
  return headers;
}
