package io.iqstream.server.auth;

import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.jackson.io.JacksonSerializer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mints HS256 tokens carrying IQ-Stream rights, for development mode, the demo, tests and the
 * benchmark: {@code {"iqstream": {"publish": [...], "subscribe": [...]}, "iat": ..., "exp": ...}}.
 * Production tokens come from the operator's own identity service.
 *
 * <p>Thread-safe: immutable; each call builds its own token.
 */
public final class TokenMinter {

    private final SecretKey key;
    private final Clock clock;
    private final JacksonSerializer<Map<String, ?>> json = new JacksonSerializer<>();

    /**
     * @param hmacSecret the shared secret; its UTF-8 bytes are the key, at least 32 of them
     * @throws IllegalArgumentException if the secret is shorter
     */
    public TokenMinter(String hmacSecret) {
        this(hmacSecret, Clock.systemUTC());
    }

    TokenMinter(String hmacSecret, Clock clock) {
        byte[] bytes = hmacSecret.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < VerificationKey.MIN_HMAC_SECRET_BYTES) {
            throw new IllegalArgumentException("the JWT secret is " + bytes.length + " bytes (UTF-8); it must be at least "
                    + VerificationKey.MIN_HMAC_SECRET_BYTES + " bytes for HS256");
        }
        this.key = new SecretKeySpec(bytes, "HmacSHA256");
        this.clock = clock;
    }

    /**
     * A token granting the given run patterns ({@code "*"}, {@code "prefix*"} or an exact id),
     * valid from now for {@code ttl}.
     *
     * @param publish patterns for the publish right (null: none)
     * @param subscribe patterns for the subscribe right (null: none)
     * @param ttl how long the token is valid, positive
     */
    public String mint(List<String> publish, List<String> subscribe, Duration ttl) {
        return mint(publish, subscribe, null, ttl);
    }

    /**
     * As {@link #mint(List, List, Duration)}, also granting the {@code threads} right (listing a thread's runs) on
     * the thread id patterns {@code threads} (null or empty: not granted, and the key is left out).
     */
    public String mint(List<String> publish, List<String> subscribe, List<String> threads, Duration ttl) {
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("token lifetime must be positive, not " + ttl);
        }
        Map<String, List<String>> rights = new LinkedHashMap<>();
        rights.put(Right.PUBLISH.claimKey(), publish == null ? List.of() : List.copyOf(publish));
        rights.put(Right.SUBSCRIBE.claimKey(), subscribe == null ? List.of() : List.copyOf(subscribe));
        if (threads != null && !threads.isEmpty()) {
            rights.put(Right.THREADS.claimKey(), List.copyOf(threads));
        }
        long nowMs = clock.millis();
        return Jwts.builder()
                .json(json)
                .claim(Rights.CLAIM, rights)
                .issuedAt(new Date(nowMs))
                .expiration(new Date(nowMs + ttl.toMillis()))
                .signWith(key, Jwts.SIG.HS256)
                .compact();
    }
}
