package io.iqstream.server.telemetry;

import io.netty.handler.codec.http.HttpMethod;

/**
 * Which requests get a span, and what their route template is ({@code http.route}): a run's events (publish or
 * subscribe), a run's status or stop, a thread listing, a Durable Streams request. Operations endpoints
 * ({@code /metrics}, {@code /healthz}), the demo and CORS preflights are not traced. Stateless; any thread.
 *
 * @param route the {@code http.route} template
 * @param kind what the request does
 * @param key the run id, thread id or stream path named by the target (raw, as sent)
 */
record TracedRoute(String route, Kind kind, String key) {
    enum Kind { PUBLISH, SUBSCRIBE, RUN, THREAD_LISTING, STREAM }

    private static final String RUNS = "/v1/runs/";
    private static final String THREADS = "/v1/threads/";
    private static final String STREAM = "/v1/stream/";

    /** The route of {@code rawPath} (no query) for {@code method}, or null when it is not traced. */
    static TracedRoute of(HttpMethod method, String rawPath) {
        if (method.equals(HttpMethod.OPTIONS)) {
            return null;
        }
        if (rawPath.startsWith(STREAM)) {
            return new TracedRoute(STREAM + "{path}", Kind.STREAM, rawPath.substring(STREAM.length() - 1));
        }
        if (rawPath.startsWith(THREADS) && rawPath.endsWith("/runs")) {
            String id = rawPath.substring(THREADS.length(), rawPath.length() - "/runs".length());
            return id.isEmpty() || id.indexOf('/') >= 0 ? null
                    : new TracedRoute(THREADS + "{threadId}/runs", Kind.THREAD_LISTING, id);
        }
        if (!rawPath.startsWith(RUNS)) {
            return null;
        }
        String rest = rawPath.substring(RUNS.length());
        if (rest.endsWith("/events")) {
            String id = rest.substring(0, rest.length() - "/events".length());
            if (id.isEmpty() || id.indexOf('/') >= 0) {
                return null;
            }
            return new TracedRoute(RUNS + "{runId}/events",
                    method.equals(HttpMethod.POST) ? Kind.PUBLISH : Kind.SUBSCRIBE, id);
        }
        return rest.isEmpty() || rest.indexOf('/') >= 0 ? null : new TracedRoute(RUNS + "{runId}", Kind.RUN, rest);
    }
}
