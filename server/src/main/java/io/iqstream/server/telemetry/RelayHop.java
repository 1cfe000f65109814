package io.iqstream.server.telemetry;

import io.netty.handler.codec.http.HttpRequest;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;

/**
 * A request relayed to the peer that holds its run or stream ({@code --peers}): a client span, child of the
 * request's own span, whose context the relayed request carries in its {@code traceparent}, so the peer's span
 * is its child. Made only when tracing is on ({@link #start} returns null otherwise); ended once, when the
 * peer's answer is whole or the relay fails.
 *
 * <p>Confined to the client connection's event loop.
 */
public final class RelayHop {
    private final Span span;
    private boolean ended;

    private RelayHop(Span span) {
        this.span = span;
    }

    /**
     * Starts the hop of {@code request} to {@code peer} and puts its context in the request's headers (which the
     * relay copies); null when tracing is off.
     */
    public static RelayHop start(Telemetry telemetry, HttpRequest request, String peer) {
        if (!telemetry.isOn()) {
            return null;
        }
        Context parent = telemetry.propagator().extract(Context.root(), request.headers(),
                RequestScopeHandler.GETTER);
        Span span = telemetry.tracer().spanBuilder("relay " + request.method().name())
                .setParent(parent)
                .setSpanKind(SpanKind.CLIENT)
                .setAttribute(TraceAttributes.HTTP_METHOD, request.method().name())
                .setAttribute(TraceAttributes.RELAY_PEER, peer)
                .setAttribute(TraceAttributes.SERVER_ADDRESS, peer)
                .startSpan();
        telemetry.propagator().inject(parent.with(span), request.headers(), RequestScopeHandler.SETTER);
        return new RelayHop(span);
    }

    /** The peer's answer began with {@code code}. */
    public void status(int code) {
        if (!ended) {
            span.setAttribute(TraceAttributes.HTTP_STATUS, code);
            if (code >= 500) {
                span.setStatus(StatusCode.ERROR);
            }
        }
    }

    /** The relay ended: {@code answered}, {@code unreachable}, {@code client_closed}, {@code peer_closed}. */
    public void end(String outcome) {
        if (ended) {
            return;
        }
        ended = true;
        span.setAttribute(TraceAttributes.RELAY_OUTCOME, outcome);
        span.end();
    }
}
