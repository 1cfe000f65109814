package io.iqstream.server.auth;

import io.iqstream.server.config.ServerConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Authorization settings, built once from flags and environment and checked by
 * {@link Authorizer#create(AuthSettings)}.
 *
 * <p>{@code enabled == false} means {@code --auth none}: every request is allowed and the key
 * fields are ignored. When enabled, exactly one key source is given: {@code hmacSecret}
 * ({@code --jwt-secret}, used as its UTF-8 bytes, at least 32 of them), {@code publicKeyPem}
 * ({@code --jwt-public-key}, one SubjectPublicKeyInfo "PUBLIC KEY" or an X.509 certificate),
 * {@code jwksFile} ({@code --jwks} with a path; re-read when it changes) or {@code jwksUrl}
 * ({@code --jwks} with a URL, fetched and refreshed in the background); {@code jwksOptions} (null:
 * {@link JwksOptions#DEFAULTS}) says how either JWKS source is refreshed. {@code issuer} and {@code audience} are checked when not
 * null or blank. {@code clockSkew} widens {@code exp}/{@code nbf} (null: {@link #DEFAULT_CLOCK_SKEW});
 * it is used in whole seconds, rounded up. {@code cacheSize} bounds the verified-token cache
 * (0 turns the cache off). A token without {@code exp} is refused unless
 * {@code allowTokensWithoutExp} ({@code --allow-tokens-without-exp}); then it never expires.
 *
 * <p>Immutable; any thread.
 */
public record AuthSettings(boolean enabled, String hmacSecret, Path publicKeyPem, Path jwksFile,
        String issuer, String audience, Duration clockSkew, int cacheSize, boolean allowTokensWithoutExp,
        URI jwksUrl, JwksOptions jwksOptions) {

    /** Clock skew allowed on {@code exp} and {@code nbf} unless configured. */
    public static final Duration DEFAULT_CLOCK_SKEW = Duration.ofSeconds(30);

    /**
     * Verified tokens kept unless configured. At a few hundred bytes per token (the token text
     * is the key) a full cache holds a few MiB; one token per browser for 16k concurrent
     * browsers.
     */
    public static final int DEFAULT_CACHE_SIZE = 16_384;

    /** {@code --auth none}: every request is allowed. */
    public static AuthSettings disabled() {
        return new AuthSettings(false, null, null, null, null, null, DEFAULT_CLOCK_SKEW, 0, false, null, null);
    }

    /** HS256/384/512 with the UTF-8 bytes of {@code secret}, no iss/aud checks, defaults otherwise. */
    public static AuthSettings hmac(String secret) {
        return new AuthSettings(true, secret, null, null, null, null, DEFAULT_CLOCK_SKEW, DEFAULT_CACHE_SIZE, false, null, null);
    }

    /** The public key in a PEM file, no iss/aud checks, defaults otherwise. */
    public static AuthSettings publicKeyPem(Path pemFile) {
        return new AuthSettings(true, null, pemFile, null, null, null, DEFAULT_CLOCK_SKEW, DEFAULT_CACHE_SIZE, false, null, null);
    }

    /** The public keys in a JWKS file, selected by {@code kid}, no iss/aud checks, defaults otherwise. */
    public static AuthSettings jwks(Path jwksFile) {
        return new AuthSettings(true, null, null, jwksFile, null, null, DEFAULT_CLOCK_SKEW, DEFAULT_CACHE_SIZE, false, null, null);
    }

    /** A copy that requires {@code iss == issuer} and {@code aud} to include {@code audience} (null: no check). */
    public AuthSettings withClaims(String requiredIssuer, String requiredAudience) {
        return new AuthSettings(enabled, hmacSecret, publicKeyPem, jwksFile, requiredIssuer, requiredAudience,
                clockSkew, cacheSize, allowTokensWithoutExp, jwksUrl, jwksOptions);
    }

    /** A copy with another clock skew and cache size. */
    public AuthSettings withLimits(Duration skew, int verifiedTokenCacheSize) {
        return new AuthSettings(enabled, hmacSecret, publicKeyPem, jwksFile, issuer, audience, skew,
                verifiedTokenCacheSize, allowTokensWithoutExp, jwksUrl, jwksOptions);
    }

    /** A copy that accepts tokens without {@code exp} ({@code --allow-tokens-without-exp}) or not. */
    public AuthSettings withTokensWithoutExp(boolean allowed) {
        return new AuthSettings(enabled, hmacSecret, publicKeyPem, jwksFile, issuer, audience, clockSkew, cacheSize,
                allowed, jwksUrl, jwksOptions);
    }

    /** The keys of the JWK Set at {@code url}, refreshed per {@code options}; defaults otherwise. */
    public static AuthSettings jwksUrl(URI url, JwksOptions options) {
        return new AuthSettings(true, null, null, null, null, null, DEFAULT_CLOCK_SKEW, DEFAULT_CACHE_SIZE, false,
                url, options);
    }

    /** A copy with other JWKS refresh options. */
    public AuthSettings withJwksOptions(JwksOptions options) {
        return new AuthSettings(enabled, hmacSecret, publicKeyPem, jwksFile, issuer, audience, clockSkew, cacheSize,
                allowTokensWithoutExp, jwksUrl, options);
    }

    /** The server's settings: its flags, 30 s of clock skew and a cache of 100,000 verified tokens. */
    public static AuthSettings from(ServerConfig config) {
        return new AuthSettings(config.authEnabled(), config.jwtSecret(), config.jwtPublicKey(), config.jwks(),
                config.jwtIssuer(), config.jwtAudience(), DEFAULT_CLOCK_SKEW, 100_000, config.allowTokensWithoutExp(),
                config.jwksUrl(), new JwksOptions(config.jwksTimeoutMs(), config.jwksRefreshMinMs(),
                        config.jwksRefreshMaxMs(), config.jwksMaxAgeMs(), config.jwksCa()));
    }

    /** Like the record's own, but never shows the secret. */
    @Override
    public String toString() {
        return "AuthSettings[enabled=" + enabled
                + ", hmacSecret=" + (hmacSecret == null ? "null" : "(" + hmacSecret.length() + " chars, hidden)")
                + ", publicKeyPem=" + publicKeyPem + ", jwksFile=" + jwksFile
                + ", issuer=" + issuer + ", audience=" + audience
                + ", clockSkew=" + clockSkew + ", cacheSize=" + cacheSize
                + ", allowTokensWithoutExp=" + allowTokensWithoutExp + ", jwksUrl=" + jwksUrl
                + ", jwksOptions=" + jwksOptions + "]";
    }
}
