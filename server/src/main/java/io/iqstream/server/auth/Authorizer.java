package io.iqstream.server.auth;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * Decides whether a request's token grants a right on a run: {@link AuthDecision#ALLOWED},
 * {@link AuthDecision#UNAUTHENTICATED} (no token, or one that does not verify now: 401) or
 * {@link AuthDecision#FORBIDDEN} (a valid token without the right: 403). With auth disabled
 * ({@code --auth none}) every request is allowed.
 *
 * <p>A token that verifies is kept in a bounded {@link TokenCache} until it expires, so the
 * next request with it (a reconnecting browser, the next publish) costs a table lookup and a
 * pattern match, neither of which allocates; tokens that fail are verified again each time.
 * Tokens longer than {@value #MAX_TOKEN_CHARS} characters are refused unread.
 *
 * <p>Thread-safe: called from several Netty event loops at once, without locks.
 */
public final class Authorizer {

    /** Longest token looked at; real ones are well under 2 KiB. */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    private final boolean enabled;
    private final Clock clock;
    private final TokenVerifier verifier;
    private final TokenCache cache;
    private final String description;
    private final LongAdder verifications = new LongAdder();

    private Authorizer(boolean enabled, Clock clock, TokenVerifier verifier, TokenCache cache, String description) {
        this.enabled = enabled;
        this.clock = clock;
        this.verifier = verifier;
        this.cache = cache;
        this.description = description;
    }

    /**
     * Builds the authorizer, loading and checking the configured key.
     *
     * @throws IllegalArgumentException with a message fit for the operator when the settings
     *     are unusable: no key or several key sources, a missing or unreadable file, an
     *     unparsable PEM or JWKS, an HMAC secret under 32 bytes, an RSA key under 2048 bits,
     *     a negative clock skew or cache size
     */
    public static Authorizer create(AuthSettings settings) {
        return create(settings, Clock.systemUTC());
    }

    /** As {@link #create(AuthSettings)}, checking token times against {@code clock}. */
    static Authorizer create(AuthSettings settings, Clock clock) {
        if (!settings.enabled()) {
            return new Authorizer(false, clock, null, null,
                    "disabled (--auth none): every request is allowed, with or without a token");
        }
        KeyRing keys = loadKeys(settings);
        Duration skew = settings.clockSkew() == null ? AuthSettings.DEFAULT_CLOCK_SKEW : settings.clockSkew();
        if (skew.isNegative()) {
            throw new IllegalArgumentException("the JWT clock skew must not be negative, not " + skew);
        }
        long skewSeconds = skew.plusMillis(999).toSeconds();
        if (settings.cacheSize() < 0) {
            throw new IllegalArgumentException("the token cache size must not be negative, not " + settings.cacheSize());
        }
        String issuer = blankToNull(settings.issuer());
        String audience = blankToNull(settings.audience());
        TokenVerifier verifier = new TokenVerifier(keys, issuer, audience, skewSeconds, clock,
                settings.allowTokensWithoutExp());
        TokenCache cache = settings.cacheSize() == 0 ? null : new TokenCache(settings.cacheSize());
        StringBuilder text = new StringBuilder(keys.description());
        if (issuer != null) {
            text.append("; iss must be ").append(issuer);
        }
        if (audience != null) {
            text.append("; aud must include ").append(audience);
        }
        text.append(settings.allowTokensWithoutExp() ? "; tokens without exp accepted" : "; exp required")
                .append("; clock skew ").append(skewSeconds).append(" s; ")
                .append(cache == null ? "no token cache" : "cache of " + settings.cacheSize() + " tokens");
        return new Authorizer(true, clock, verifier, cache, text.toString());
    }

    private static KeyRing loadKeys(AuthSettings s) {
        boolean secret = s.hmacSecret() != null && !s.hmacSecret().isEmpty();
        boolean pem = s.publicKeyPem() != null;
        boolean jwks = s.jwksFile() != null;
        int sources = (secret ? 1 : 0) + (pem ? 1 : 0) + (jwks ? 1 : 0);
        if (sources == 0) {
            throw new IllegalArgumentException("JWT auth is on but no key is configured:"
                    + " give one of --jwt-secret, --jwt-public-key or --jwks");
        }
        if (sources > 1) {
            throw new IllegalArgumentException("several JWT key sources are configured ("
                    + ((secret ? "--jwt-secret " : "") + (pem ? "--jwt-public-key " : "") + (jwks ? "--jwks" : "")).trim()
                    + "); give exactly one");
        }
        if (secret) {
            return KeyRing.fromSecret(s.hmacSecret());
        }
        return pem ? KeyRing.fromPem(s.publicKeyPem()) : KeyRing.fromJwks(s.jwksFile());
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /**
     * Whether {@code token} grants {@code right} on {@code runId}.
     *
     * @param token the token as presented (see {@link TokenExtractor}), or null
     * @param runId a validated run id
     */
    public AuthDecision authorize(String token, String runId, Right right) {
        if (!enabled) {
            return AuthDecision.ALLOWED;
        }
        Rights rights = rightsOf(token);
        if (rights == null) {
            return AuthDecision.UNAUTHENTICATED;
        }
        return rights.allows(runId, right) ? AuthDecision.ALLOWED : AuthDecision.FORBIDDEN;
    }

    /** Whether {@code token} grants either right on {@code runId} (reading a run's status). */
    public AuthDecision authorizeAny(String token, String runId) {
        if (!enabled) {
            return AuthDecision.ALLOWED;
        }
        Rights rights = rightsOf(token);
        if (rights == null) {
            return AuthDecision.UNAUTHENTICATED;
        }
        return rights.allowsEither(runId) ? AuthDecision.ALLOWED : AuthDecision.FORBIDDEN;
    }

    /** The token's rights now, or null when it does not verify. */
    private Rights rightsOf(String token) {
        if (token == null || token.isEmpty() || token.length() > MAX_TOKEN_CHARS) {
            return null;
        }
        long nowMs = clock.millis();
        if (cache != null) {
            Rights cached = cache.get(token, nowMs);
            if (cached != null) {
                return cached;
            }
        }
        verifications.increment();
        TokenVerifier.Verified verified = verifier.verify(token);
        if (!verified.isAccepted()) {
            return null;
        }
        if (cache != null && nowMs < verified.expiresAtMs()) {
            cache.put(token, verified.rights(), verified.expiresAtMs(), nowMs);
        }
        return verified.rights();
    }

    /**
     * Why {@code token} is refused, for the body of a 401 answer: no token, a token without
     * {@code exp}, an unknown key, or simply not valid. Called only after a request was found
     * {@link AuthDecision#UNAUTHENTICATED}; it verifies the token again (the refusal path only, so
     * the accepted path keeps its cost), and never triggers a key refresh.
     */
    public String refusalMessage(String token) {
        if (token == null || token.isEmpty()) {
            return TokenRefusal.MISSING.message();
        }
        if (!enabled || token.length() > MAX_TOKEN_CHARS) {
            return TokenRefusal.INVALID.message();
        }
        TokenVerifier.Verified verified = verifier.verify(token);
        return verified.isAccepted() ? TokenRefusal.INVALID.message() : verified.refusal().message();
    }

    /** Whether tokens are checked at all ({@code false} for {@code --auth none}). */
    public boolean enabled() {
        return enabled;
    }

    /** For the startup log, e.g. {@code "HS256/384/512 shared secret (64 bytes); clock skew 30 s; cache of 16384 tokens"}. */
    public String describe() {
        return description;
    }

    /** Signature verifications done so far (cache misses); for tests and metrics. */
    long verificationCount() {
        return verifications.sum();
    }
}
