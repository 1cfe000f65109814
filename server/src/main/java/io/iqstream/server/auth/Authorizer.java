package io.iqstream.server.auth;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
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
 * <p>With {@code --jwks} the key set is kept current by a {@link JwksRefresher} on its own thread:
 * verification reads the set in use, a token naming an unknown {@code kid} asks for one early,
 * rate-limited refresh (and is refused: requests are never held while keys are fetched), and
 * cached tokens whose key has left the set are verified again (and refused). {@link #isReady()}
 * is false until a first set has loaded and once the last good one is older than
 * {@code --jwks-max-age}.
 *
 * <p>Thread-safe: called from several Netty event loops at once, without locks.
 */
public final class Authorizer implements AutoCloseable {

    /** Longest token looked at; real ones are well under 2 KiB. */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    private final boolean enabled;
    private final Clock clock;
    private final TokenVerifier verifier;
    private final TokenCache cache;
    private final String description;
    private final LongAdder verifications = new LongAdder();
    private final JwksRefresher refresher;
    private final long startTimeoutMs;

    private Authorizer(boolean enabled, Clock clock, TokenVerifier verifier, TokenCache cache, String description,
            JwksRefresher refresher, long startTimeoutMs) {
        this.enabled = enabled;
        this.clock = clock;
        this.verifier = verifier;
        this.cache = cache;
        this.description = description;
        this.refresher = refresher;
        this.startTimeoutMs = startTimeoutMs;
    }

    /**
     * Builds the authorizer, loading and checking the configured key. A JWKS URL is fetched in the
     * background from here on: {@link #awaitKeys()} waits for it.
     *
     * @throws IllegalArgumentException with a message fit for the operator when the settings
     *     are unusable: no key or several key sources, a missing or unreadable file, an
     *     unparsable PEM or JWKS, an HMAC secret under 32 bytes, an RSA key under 2048 bits,
     *     a negative clock skew or cache size, a JWKS URL that is not https (or http on loopback)
     */
    public static Authorizer create(AuthSettings settings) {
        return create(settings, Clock.systemUTC(), true);
    }

    /** As {@link #create(AuthSettings)}, checking token times against {@code clock}. */
    static Authorizer create(AuthSettings settings, Clock clock) {
        return create(settings, clock, true);
    }

    /**
     * As {@link #create(AuthSettings, Clock)}; with {@code startRefreshThread} false a JWKS source is
     * refreshed only when a test calls {@link #refresher()}{@code .runOnce()}.
     */
    static Authorizer create(AuthSettings settings, Clock clock, boolean startRefreshThread) {
        if (!settings.enabled()) {
            return new Authorizer(false, clock, null, null,
                    "disabled (--auth none): every request is allowed, with or without a token", null, 0);
        }
        checkSources(settings);
        JwksOptions options = settings.jwksOptions() == null ? JwksOptions.DEFAULTS : settings.jwksOptions();
        JwksRefresher refresher = null;
        Supplier<KeyRing> ringSource;
        String keyText;
        if (settings.jwksUrl() != null) {
            URI url = checkedJwksUrl(settings.jwksUrl());
            refresher = new JwksRefresher(new JwksEndpoint(url, options.timeoutMs(), options.caPem()), null,
                    options.refreshMinMs(), options.refreshMaxMs(), options.maxAgeMs(), clock);
            ringSource = refresher::current;
            keyText = "JWKS " + refresher.describe();
        } else if (settings.jwksFile() != null) {
            KeyRing first = KeyRing.fromJwks(settings.jwksFile());
            refresher = new JwksRefresher(new JwksFileSource(settings.jwksFile(), options.refreshMinMs()), first,
                    options.refreshMinMs(), options.refreshMaxMs(), options.maxAgeMs(), clock);
            ringSource = refresher::current;
            keyText = first.description() + ", re-read when it changes (checked every " + options.refreshMinMs() / 1000.0
                    + " s)";
        } else {
            KeyRing keys = loadKeys(settings);
            ringSource = () -> keys;
            keyText = keys.description();
        }
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
        TokenVerifier verifier = new TokenVerifier(ringSource, issuer, audience, skewSeconds, clock,
                settings.allowTokensWithoutExp());
        TokenCache cache = settings.cacheSize() == 0 ? null : new TokenCache(settings.cacheSize());
        StringBuilder text = new StringBuilder(keyText);
        if (issuer != null) {
            text.append("; iss must be ").append(issuer);
        }
        if (audience != null) {
            text.append("; aud must include ").append(audience);
        }
        text.append(settings.allowTokensWithoutExp() ? "; tokens without exp accepted" : "; exp required")
                .append("; clock skew ").append(skewSeconds).append(" s; ")
                .append(cache == null ? "no token cache" : "cache of " + settings.cacheSize() + " tokens");
        if (refresher != null && startRefreshThread) {
            refresher.start();
        }
        return new Authorizer(true, clock, verifier, cache, text.toString(), refresher, options.timeoutMs());
    }

    /** An https URL, or an http one whose host is a loopback address (tests, sidecars). */
    static URI checkedJwksUrl(URI url) {
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (scheme.equals("https") && url.getHost() != null) {
            return url;
        }
        if (scheme.equals("http") && isLoopback(url.getHost())) {
            return url;
        }
        throw new IllegalArgumentException("--jwks " + url + ": a JWKS URL must be https:// (http:// only for a"
                + " loopback address such as 127.0.0.1, ::1 or localhost)");
    }

    private static boolean isLoopback(String host) {
        if (host == null) {
            return false;
        }
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (h.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1")) {
            return true;
        }
        return false;
    }

    private static void checkSources(AuthSettings s) {
        boolean secret = s.hmacSecret() != null && !s.hmacSecret().isEmpty();
        boolean pem = s.publicKeyPem() != null;
        boolean jwks = s.jwksFile() != null || s.jwksUrl() != null;
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
        if (s.jwksFile() != null && s.jwksUrl() != null) {
            throw new IllegalArgumentException("--jwks is either a file or a URL, not both");
        }
    }

    private static KeyRing loadKeys(AuthSettings s) {
        boolean secret = s.hmacSecret() != null && !s.hmacSecret().isEmpty();
        return secret ? KeyRing.fromSecret(s.hmacSecret()) : KeyRing.fromPem(s.publicKeyPem());
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

    /**
     * Who presents {@code token}, for what is shared per caller (thread listings): {@code sub:} and the token's
     * subject, or {@code token:} and the token itself when it has no {@code sub}; null when the token does not
     * verify or authorization is off (the caller then names another key, the connection's address).
     */
    public String callerOf(String token) {
        if (!enabled) {
            return null;
        }
        Rights rights = rightsOf(token);
        if (rights == null) {
            return null;
        }
        return rights.subject() != null ? "sub:" + rights.subject() : "token:" + token;
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
            if (verified.refusal() == TokenRefusal.UNKNOWN_KEY && refresher != null) {
                refresher.requestEarlyRefresh();
            }
            return null;
        }
        if (cache != null && nowMs < verified.expiresAtMs()) {
            cache.put(token, verified.rights(), verified.expiresAtMs(), verified.key(), nowMs);
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

    /**
     * Whether the keys are usable: always, but for a JWKS source with no set loaded yet or whose
     * last good set is older than {@code --jwks-max-age}. {@code /readyz} answers 503 while false.
     * Any thread.
     */
    public boolean isReady() {
        return refresher == null || refresher.isReady();
    }

    /**
     * Waits for a JWKS URL's first usable set, up to {@code --jwks-timeout} from now; returns at once
     * for any other key source. Called once at start, off the event loops.
     *
     * @throws IllegalArgumentException with a message fit for the operator when no usable set came
     */
    public void awaitKeys() throws InterruptedException {
        if (refresher == null || refresher.awaitFirstSet(startTimeoutMs)) {
            return;
        }
        throw new IllegalArgumentException("no usable JWK Set from " + refresher.describe() + " within --jwks-timeout "
                + startTimeoutMs + " ms" + (refresher.lastFailure().isEmpty() ? " (no answer)" : "; last failure: "
                + refresher.lastFailure()));
    }

    /** The JWKS metrics (Prometheus text) to append to {@code /metrics}; empty without a JWKS source. */
    public String metricsText() {
        if (refresher == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder(2048);
        refresher.renderMetrics(sb);
        return sb.toString();
    }

    /** The JWKS refresher, or null for a fixed key; for tests. */
    JwksRefresher refresher() {
        return refresher;
    }

    /** Stops the JWKS refresh thread, if any. */
    @Override
    public void close() {
        if (refresher != null) {
            refresher.close();
        }
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
