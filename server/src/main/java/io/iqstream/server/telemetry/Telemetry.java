package io.iqstream.server.telemetry;

import io.iqstream.server.config.TracingEnvironment;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The server's traces: the OpenTelemetry SDK built once at start by its autoconfiguration from the standard
 * {@code OTEL_*} variables (exporter, endpoint, service name, sampler, propagators), or nothing at all.
 *
 * <p>Off unless configured ({@link #configuredBy}): then {@link #isOn()} is false, no SDK is built, no handler is
 * added to any pipeline and the request path calls nothing of OpenTelemetry. On, each connection gets a
 * {@link RequestScopeHandler} that opens one span per traced request (never one per event). The default sampler
 * of the autoconfiguration, {@code parentbased_always_on}, follows the caller's {@code traceparent}; set
 * {@code OTEL_TRACES_SAMPLER=parentbased_traceidratio} and {@code OTEL_TRACES_SAMPLER_ARG} to sample new traces.
 *
 * <p>Immutable after start; any thread.
 */
public final class Telemetry implements AutoCloseable {
    /** The instrumentation scope the spans are made under. */
    static final String SCOPE = "io.iqstream.server";
    /** Off: nothing traced. */
    public static final Telemetry OFF = new Telemetry(null, null, false);

    /** Test hook: when set, {@link #start} traces with this instead of the autoconfigured SDK. */
    public static volatile OpenTelemetry testOverride;

    private final OpenTelemetry otel;
    private final Tracer tracer;
    private final boolean owned;

    private Telemetry(OpenTelemetry otel, Tracer tracer, boolean owned) {
        this.otel = otel;
        this.tracer = tracer;
        this.owned = owned;
    }

    /** True when the environment asks for traces ({@link TracingEnvironment#asksForTraces}). */
    public static boolean configuredBy(Map<String, String> env) {
        return TracingEnvironment.asksForTraces(env);
    }

    /**
     * The server's telemetry: {@link #OFF} unless {@code tracing}; on, the SDK as the {@code OTEL_*} variables
     * configure it (metrics and logs exporters are left off: metrics are on {@code /metrics}).
     */
    public static Telemetry start(boolean tracing) {
        OpenTelemetry override = testOverride;
        if (override != null) {
            return new Telemetry(override, override.getTracer(SCOPE), false);
        }
        if (!tracing) {
            return OFF;
        }
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> Map.of("otel.metrics.exporter", "none", "otel.logs.exporter", "none"))
                .disableShutdownHook()
                .build()
                .getOpenTelemetrySdk();
        return new Telemetry(sdk, sdk.getTracer(SCOPE), true);
    }

    public boolean isOn() {
        return tracer != null;
    }

    Tracer tracer() {
        return tracer;
    }

    /** The propagators configured ({@code OTEL_PROPAGATORS}; W3C trace context and baggage by default). */
    TextMapPropagator propagator() {
        return otel.getPropagators().getTextMapPropagator();
    }

    /** Exports what is buffered and stops the SDK (at most a few seconds). */
    @Override
    public void close() {
        if (owned && otel instanceof OpenTelemetrySdk sdk) {
            sdk.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
