package io.iqstream.server.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.util.List;

/**
 * Which browser origins may call the server ({@code --cors-origin}); adds the CORS headers to responses and
 * answers preflights. Immutable; any thread.
 */
public final class CorsPolicy {
    private final List<String> origins;
    private final boolean any;

    public CorsPolicy(List<String> origins) {
        this.origins = origins;
        this.any = origins.contains("*");
    }

    public boolean isEnabled() {
        return !origins.isEmpty();
    }

    /** The origin to echo, or null when the request has none or it is not allowed. */
    public String allowedOrigin(HttpRequest request) {
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin == null || origins.isEmpty()) {
            return null;
        }
        return any || origins.contains(origin) ? origin : null;
    }

    /** Adds the CORS headers for an allowed origin. */
    public void apply(HttpRequest request, HttpHeaders headers) {
        String origin = allowedOrigin(request);
        if (origin != null) {
            headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
            headers.add(HttpHeaderNames.VARY, HttpHeaderNames.ORIGIN);
        }
    }

    /** Headers of a preflight answer. */
    public void applyPreflight(HttpRequest request, HttpHeaders headers) {
        apply(request, headers);
        if (allowedOrigin(request) != null) {
            headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, DELETE, OPTIONS");
            headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS,
                    "Authorization, Content-Type, Last-Event-ID, Cache-Control");
            headers.set(HttpHeaderNames.ACCESS_CONTROL_MAX_AGE, "600");
        }
    }
}
