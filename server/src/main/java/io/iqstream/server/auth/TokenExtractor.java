package io.iqstream.server.auth;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;

/** STUB until the auth package lands. */
public final class TokenExtractor {
    private TokenExtractor() {}

    public static String extract(HttpRequest request, QueryStringDecoder query) {
        String h = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (h != null && h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return h.substring(7).trim();
        }
        List<String> q = query.parameters().get("access_token");
        return q == null || q.isEmpty() ? null : q.get(0);
    }
}
