package io.iqstream.server.telemetry;

import io.iqstream.server.run.Run;
import io.netty.channel.Channel;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;

/**
 * What a publish or a subscription tells its request's span, once when it begins and once when it ends (never per
 * event). Each call first asks whether the connection has a request scope ({@link RequestScopeHandler}); with
 * tracing and JSON logs off it has none and the call returns there.
 *
 * <p>A publish leaves its span's context on the run ({@link Run#traceContext}): a reader's span links to it, on
 * this node or, through a relay, from another one. Confined to the connection's current event loop.
 */
public final class RequestSpans {
    private RequestSpans() {}

    /** A publishing request attached to {@code run} ({@code restoredTo}: its restore's last event id, or 0). */
    public static void publishOpened(Channel channel, Run run, long restoredTo) {
        RequestSpan s = serving(channel);
        if (s == null) {
            return;
        }
        run.traceContext(s.context());
        s.startBytes(run.log().frameBytes());
        if (restoredTo > 0) {
            s.span().setAttribute(TraceAttributes.PUBLISH_RESTORED_TO, restoredTo);
        }
    }

    /**
     * The publishing request ended: {@code events} read from its body, the outcome ({@code ended}, {@code done},
     * {@code stopped}, {@code publisher_lost}, {@code run_idle}, or the refusal's code).
     */
    public static void publishEnded(Channel channel, Run run, long events, String outcome) {
        RequestSpan s = serving(channel);
        if (s == null) {
            return;
        }
        Span span = s.span();
        span.setAttribute(TraceAttributes.PUBLISH_EVENTS, events);
        span.setAttribute(TraceAttributes.MESSAGING_BATCH_COUNT, events);
        span.setAttribute(TraceAttributes.PUBLISH_BYTES, Math.max(0, run.log().frameBytes() - s.startBytes()));
        span.setAttribute(TraceAttributes.PUBLISH_OUTCOME, outcome);
    }

    /**
     * A subscription began on {@code run}: after event {@code resumedAfter} (0: from the start), with
     * {@code replayed} events already in the log behind its cursor. Its span links to the run's publish span.
     */
    public static void readerAttached(Channel channel, Run run, long resumedAfter, long replayed) {
        RequestSpan s = serving(channel);
        if (s == null) {
            return;
        }
        Span span = s.span();
        span.setAttribute(TraceAttributes.RESUME_AFTER, resumedAfter);
        span.setAttribute(TraceAttributes.READ_REPLAYED, replayed);
        SpanContext publish = run.traceContext();
        if (publish != null && publish.isValid()) {
            span.addLink(publish);
        }
    }

    /**
     * A subscription ended having written {@code events}: the outcome ({@code ended}, {@code tail},
     * {@code client_closed}, {@code cut_slow}, {@code cut_memory}, {@code run_dropped}, or the refusal's code).
     */
    public static void readerEnded(Channel channel, long events, String outcome) {
        RequestSpan s = serving(channel);
        if (s == null) {
            return;
        }
        s.span().setAttribute(TraceAttributes.READ_EVENTS, events);
        s.span().setAttribute(TraceAttributes.READ_OUTCOME, outcome);
    }

    /** The traced request being served on {@code channel}, when its span records; else null. */
    private static RequestSpan serving(Channel channel) {
        if (!channel.hasAttr(RequestScopeHandler.KEY)) {
            return null;
        }
        RequestScopeHandler h = channel.attr(RequestScopeHandler.KEY).get();
        RequestSpan s = h == null ? null : h.serving();
        return s == null || s.span() == null || !s.span().isRecording() ? null : s;
    }
}
