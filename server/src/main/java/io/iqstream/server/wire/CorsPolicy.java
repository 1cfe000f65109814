package io.iqstream.server.wire;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.util.List;

/**
 * Which browser origins may call the server ({@code --cors-origin}); adds the CORS headers to responses, answers
 * preflights, and says whether a request may use ambient credentials (the {@code iqstream_token} cookie).
 *
 * <p>Security precondition: credentials are only ever allowed for an origin listed by name. An origin named in
 * the list gets its own origin echoed with {@code Access-Control-Allow-Credentials: true}. Any other origin, when
 * the list holds {@code *}, gets {@code Access-Control-Allow-Origin: *} and never credentials (browsers then send
 * no cookie and hide nothing but credentialed responses). Independently of what browsers do with these headers,
 * the server honours the cookie only when {@link #allowsCredentials} says so: a request with no {@code Origin}
 * (same-origin GETs, curl, backends) or from a listed origin. A foreign page that coaxes a browser into sending
 * the cookie anyway (a simple GET, an {@code EventSource} with {@code withCredentials}) is answered as if it had
 * no token.
 *
 * <p>Immutable; any thread.
 */
public final class CorsPolicy {
    private final List<String> listed;
    private final boolean any;

    public CorsPolicy(List<String> origins) {
        this.listed = origins.stream().filter(o -> !o.equals("*")).toList();
        this.any = origins.contains("*");
    }

    public boolean isEnabled() {
        return any || !listed.isEmpty();
    }

    /**
     * Whether the request may authenticate with ambient credentials (the token cookie): true when it has no
     * {@code Origin} header or its origin is listed by name in {@code --cors-origin}; never for an origin admitted
     * only by {@code *}.
     */
    public boolean allowsCredentials(HttpRequest request) {
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        return origin == null || listed.contains(origin);
    }

    /**
     * The value of {@code Access-Control-Allow-Origin} for this request: its own origin when listed by name,
     * {@code *} for any other origin when the list holds {@code *}, else null (no CORS headers).
     */
    public String allowedOrigin(HttpRequest request) {
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin == null) {
            return null;
        }
        if (listed.contains(origin)) {
            return origin;
        }
        return any ? "*" : null;
    }

    /** Adds the CORS headers for an allowed origin; credentials only for one listed by name. */
    public void apply(HttpRequest request, HttpHeaders headers) {
        String allowed = allowedOrigin(request);
        if (allowed == null) {
            return;
        }
        headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
        if (!allowed.equals("*")) {
            headers.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
        }
        // the answer (and whether the cookie counts) depends on Origin, so caches must key on it
        headers.add(HttpHeaderNames.VARY, HttpHeaderNames.ORIGIN);
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
