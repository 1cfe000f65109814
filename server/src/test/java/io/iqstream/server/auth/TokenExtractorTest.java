package io.iqstream.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Authorization header, then ?access_token=, then the iqstream_token cookie. */
class TokenExtractorTest {

    private static HttpRequest request(String uri, String authorization, String cookie) {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri);
        if (authorization != null) {
            request.headers().set(HttpHeaderNames.AUTHORIZATION, authorization);
        }
        if (cookie != null) {
            request.headers().set(HttpHeaderNames.COOKIE, cookie);
        }
        return request;
    }

    private static String extract(String uri, String authorization, String cookie) {
        HttpRequest request = request(uri, authorization, cookie);
        return TokenExtractor.extract(request, queryTokens(request), true);
    }

    @Test
    void headerComesBeforeQueryAndCookie() {
        assertEquals("h.h.h", extract("/v1/runs/r/events?access_token=q.q.q", "Bearer h.h.h", "iqstream_token=c.c.c"));
    }

    @Test
    void queryComesBeforeCookie() {
        assertEquals("q.q.q", extract("/v1/runs/r/events?lastEventId=3&access_token=q.q.q", null, "iqstream_token=c.c.c"));
    }

    @Test
    void cookieIsUsedWhenAlone() {
        assertEquals("c.c.c", extract("/v1/runs/r/events", null, "theme=dark; iqstream_token=c.c.c; other=1"));
        assertEquals("c.c.c", extract("/v1/runs/r/events", null, "iqstream_token=\"c.c.c\""));
    }

    @Test
    void bearerSchemeIsCaseInsensitiveAndSpacesAreSkipped() {
        for (String header : new String[] {"Bearer t.t.t", "bearer t.t.t", "BEARER t.t.t", "Bearer   t.t.t", "bEaReR\tt.t.t"}) {
            assertEquals("t.t.t", extract("/", header, null), header);
        }
        // Netty's decoder strips surrounding whitespace before we see it; a header built by hand may keep it
        assertEquals("t.t.t", TokenExtractor.bearerToken("  Bearer t.t.t \t"));
    }

    @Test
    void otherSchemesAndEmptyBearerFallThroughToTheNextSource() {
        assertEquals("q.q.q", extract("/?access_token=q.q.q", "Basic dXNlcjpwYXNz", null));
        assertEquals("q.q.q", extract("/?access_token=q.q.q", "Bearer", null));
        assertEquals("q.q.q", extract("/?access_token=q.q.q", "Bearer   ", null));
        assertEquals("q.q.q", extract("/?access_token=q.q.q", "Bearert.t.t", null));
        assertEquals("c.c.c", extract("/?access_token=", "Basic x", "iqstream_token=c.c.c"));
    }

    @Test
    void returnsNullWhenNoTokenIsPresented() {
        assertNull(extract("/v1/runs/r/events", null, null));
        assertNull(extract("/v1/runs/r/events?access_token=", "", "iqstream_token=; other_iqstream_token=x"));
        assertNull(extract("/v1/runs/r/events?token=x", null, "iqstream_tokens=x"));
    }

    @Test
    void cookieIsFoundWithoutAQueryDecoder() {
        assertEquals("c.c.c", TokenExtractor.extract(request("/?access_token=q", null, "iqstream_token=c.c.c"), null, true));
    }

    @Test
    void cookieIsIgnoredWhenTheCallerDisallowsCredentials() {
        HttpRequest request = request("/v1/runs/r/events", null, "iqstream_token=c.c.c");
        assertNull(TokenExtractor.extract(request, queryTokens(request), false));
        HttpRequest withQuery = request("/v1/runs/r/events?access_token=q.q.q", "Bearer h.h.h", "iqstream_token=c.c.c");
        assertEquals("h.h.h", TokenExtractor.extract(withQuery, queryTokens(withQuery), false),
                "explicit sources still count");
        HttpRequest queryOnly = request("/v1/runs/r/events?access_token=q.q.q", null, "iqstream_token=c.c.c");
        assertEquals("q.q.q", TokenExtractor.extract(queryOnly, queryTokens(queryOnly), false));
    }

    @Test
    void aBadHeaderTokenIsNotSwappedForALaterSource() {
        assertEquals("not-a-jwt", extract("/?access_token=q.q.q", "Bearer not-a-jwt", null));
    }

    /** The access_token values as the server's request-target parser hands them over. */
    private static List<String> queryTokens(HttpRequest request) {
        return new QueryStringDecoder(request.uri()).parameters().get(TokenExtractor.QUERY_PARAMETER);
    }
}
