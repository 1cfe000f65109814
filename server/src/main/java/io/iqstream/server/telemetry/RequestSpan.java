package io.iqstream.server.telemetry;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;

/**
 * One traced request on a connection: its server span (null when only logs are scoped, {@code --log-format json}
 * with tracing off) and what a log line says of it (run id, stream path). Made when its head is read, ended when
 * its response's end is written or the connection closes, whichever is first; ending twice does nothing.
 *
 * <p>Confined to its connection's current event loop.
 */
final class RequestSpan {
    private final Span span;
    private final TracedRoute route;
    private boolean ended;
    /** The run log's frame bytes when a publish began ({@link RequestSpans#publishOpened}). */
    private long startBytes;

    RequestSpan(Span span, TracedRoute route) {
        this.span = span;
        this.route = route;
    }

    /** The server span, or null when tracing is off. */
    Span span() {
        return span;
    }

    TracedRoute route() {
        return route;
    }

    /** The run id of a run request, else null. */
    String runId() {
        return route.kind() == TracedRoute.Kind.STREAM || route.kind() == TracedRoute.Kind.THREAD_LISTING
                ? null : route.key();
    }

    /** The stream path of a Durable Streams request, else null. */
    String streamPath() {
        return route.kind() == TracedRoute.Kind.STREAM ? route.key() : null;
    }

    /** This span's context, or null when tracing is off. */
    SpanContext context() {
        return span == null ? null : span.getSpanContext();
    }

    long startBytes() {
        return startBytes;
    }

    void startBytes(long bytes) {
        startBytes = bytes;
    }

    void status(int code) {
        if (span == null || ended) {
            return;
        }
        span.setAttribute(TraceAttributes.HTTP_STATUS, code);
        if (code >= 500) {
            span.setAttribute(TraceAttributes.ERROR_TYPE, Integer.toString(code));
            span.setStatus(StatusCode.ERROR);
        }
    }

    void end(String unfinished) {
        if (ended) {
            return;
        }
        ended = true;
        if (span == null) {
            return;
        }
        if (unfinished != null) {
            span.setAttribute(TraceAttributes.CLOSED_BEFORE_END, unfinished);
        }
        span.end();
    }
}
