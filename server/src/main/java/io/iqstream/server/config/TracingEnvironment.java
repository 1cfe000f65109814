package io.iqstream.server.config;

import java.util.Map;

/** Whether the {@code OTEL_*} environment variables ask for traces; read once, at start. Stateless. */
public final class TracingEnvironment {
    private TracingEnvironment() {}

    /**
     * True when the environment asks for traces: {@code OTEL_TRACES_EXPORTER} names an exporter other than
     * {@code none}, or {@code OTEL_EXPORTER_OTLP_ENDPOINT} / {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} is set; and
     * {@code OTEL_SDK_DISABLED} is not {@code true}.
     */
    public static boolean asksForTraces(Map<String, String> env) {
        if ("true".equalsIgnoreCase(env.getOrDefault("OTEL_SDK_DISABLED", "").trim())) {
            return false;
        }
        String exporter = env.getOrDefault("OTEL_TRACES_EXPORTER", "").trim();
        if (!exporter.isEmpty()) {
            return !exporter.equalsIgnoreCase("none");
        }
        return !env.getOrDefault("OTEL_EXPORTER_OTLP_ENDPOINT", "").isBlank()
                || !env.getOrDefault("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").isBlank();
    }
}
