package io.iqstream.server.auth;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import java.util.List;

/**
 * Finds the token a request presents, in this order: the {@code Authorization: Bearer <token>}
 * header (scheme matched case-insensitively), the {@code access_token} query parameter, the
 * {@code iqstream_token} cookie. Browsers' EventSource cannot set headers, hence the other two.
 *
 * <p>A source that is absent, empty, or (for the header) of another scheme such as
 * {@code Basic} is passed over for the next. The first token found is returned unchecked: a
 * bad one is refused by {@link Authorizer}, never swapped for a later source's.
 *
 * <p>Security precondition: the cookie is ambient (a browser attaches it to requests a foreign
 * page makes), so it is read only when the caller says the request may use credentials, that
 * is when it has no {@code Origin} or one listed by name in {@code --cors-origin}. The header
 * and the query parameter are explicit: whoever sends them knows the token.
 *
 * <p>Stateless; any thread.
 */
public final class TokenExtractor {

    /** The query parameter browsers put the token in. */
    public static final String QUERY_PARAMETER = "access_token";
    /** The cookie browsers put the token in. */
    public static final String COOKIE_NAME = "iqstream_token";

    private static final String BEARER = "Bearer";

    private TokenExtractor() {
    }

    /**
     * The request's token, or null if it presents none.
     *
     * @param queryTokens the decoded values of the {@code access_token} query parameter, as the request
     *     target's parser gave them (null: none)
     * @param cookieAllowed whether the {@code iqstream_token} cookie may be used (see the class
     *     notes); when false a cookie is ignored as if absent
     */
    public static String extract(HttpRequest request, List<String> queryTokens, boolean cookieAllowed) {
        HttpHeaders headers = request.headers();
        String authorization = headers.get(HttpHeaderNames.AUTHORIZATION);
        if (authorization != null) {
            String token = bearerToken(authorization);
            if (token != null) {
                return token;
            }
        }
        if (queryTokens != null) {
            for (String value : queryTokens) {
                if (!value.isEmpty()) {
                    return value;
                }
            }
        }
        if (!cookieAllowed) {
            return null;
        }
        for (String cookieHeader : headers.getAll(HttpHeaderNames.COOKIE)) {
            if (cookieHeader.contains(COOKIE_NAME)) {
                for (Cookie cookie : ServerCookieDecoder.LAX.decodeAll(cookieHeader)) {
                    if (cookie.name().equals(COOKIE_NAME) && !cookie.value().isEmpty()) {
                        return cookie.value();
                    }
                }
            }
        }
        return null;
    }

    /** The token of a {@code Bearer} credential, or null for another scheme or an empty token. */
    static String bearerToken(String authorization) {
        int start = skipSpaces(authorization, 0);
        if (!authorization.regionMatches(true, start, BEARER, 0, BEARER.length())) {
            return null;
        }
        int afterScheme = start + BEARER.length();
        if (afterScheme >= authorization.length() || !isSpace(authorization.charAt(afterScheme))) {
            return null;
        }
        int tokenStart = skipSpaces(authorization, afterScheme);
        int tokenEnd = authorization.length();
        while (tokenEnd > tokenStart && isSpace(authorization.charAt(tokenEnd - 1))) {
            tokenEnd--;
        }
        return tokenEnd > tokenStart ? authorization.substring(tokenStart, tokenEnd) : null;
    }

    private static int skipSpaces(String s, int from) {
        int i = from;
        while (i < s.length() && isSpace(s.charAt(i))) {
            i++;
        }
        return i;
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t';
    }
}
