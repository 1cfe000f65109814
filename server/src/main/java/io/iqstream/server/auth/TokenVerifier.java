package io.iqstream.server.auth;

import io.iqstream.server.log.Redaction;
import io.jsonwebtoken.Claims;
import io.jsonwebtoken.Jws;
import io.jsonwebtoken.JwtException;
import io.jsonwebtoken.JwtParser;
import io.jsonwebtoken.JwtParserBuilder;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.jackson.io.JacksonDeserializer;
import java.time.Clock;
import java.util.Date;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verifies a JWT with jjwt and reads its rights: signature by a {@link KeyRing} key (unsigned
 * tokens, JWE and algorithm confusion refused), {@code exp}/{@code nbf} within the clock skew,
 * and {@code iss}/{@code aud} when configured. A token without {@code exp} is refused
 * ({@link TokenRefusal#EXP_REQUIRED}) unless the settings allow it; then it never expires.
 *
 * <p>The key ring is read on every verification, so a refreshed JWK Set applies to the next token;
 * a {@code kid} the ring lacks is {@link TokenRefusal#UNKNOWN_KEY}, which the caller may answer
 * with an early refresh.
 *
 * <p>Any thread: the jjwt parser is immutable and thread-safe; two threads meeting a new ring at
 * once may each build a parser, which is harmless. A token that fails is a refusal result, logged
 * at debug level, never an exception.
 */
final class TokenVerifier {

    private static final Logger LOG = LoggerFactory.getLogger(TokenVerifier.class);

    /**
     * The outcome of one verification: the token's rights, the epoch millisecond from which it
     * is no longer accepted and the key that verified it, or (rights null) why it was refused.
     */
    record Verified(Rights rights, long expiresAtMs, VerificationKey key, TokenRefusal refusal) {
        private static final Verified[] REFUSED = new Verified[TokenRefusal.values().length];

        static {
            for (TokenRefusal r : TokenRefusal.values()) {
                REFUSED[r.ordinal()] = new Verified(null, 0, null, r);
            }
        }

        /** The shared outcome for a refusal (no allocation). */
        static Verified refused(TokenRefusal reason) {
            return REFUSED[reason.ordinal()];
        }

        boolean isAccepted() {
            return refusal == null;
        }
    }

    /** A key ring and the jjwt parser built over it; replaced when the ring is. */
    private record Parsing(KeyRing ring, JwtParser parser) {
    }

    private final Supplier<KeyRing> keys;
    private final String issuer;
    private final String audience;
    private final long clockSkewSeconds;
    private final Clock clock;
    private final long clockSkewMs;
    private final boolean allowWithoutExp;
    private volatile Parsing parsing;

    /** Over one fixed key ring. */
    TokenVerifier(KeyRing keys, String issuer, String audience, long clockSkewSeconds, Clock clock,
            boolean allowWithoutExp) {
        this(() -> keys, issuer, audience, clockSkewSeconds, clock, allowWithoutExp);
    }

    /**
     * @param keys the key ring in use now (null while none has loaded); read on every verification
     * @param issuer required {@code iss}, or null
     * @param audience a value {@code aud} must hold, or null
     * @param clockSkewSeconds allowed skew on {@code exp} and {@code nbf}
     * @param clock the time tokens are checked against
     * @param allowWithoutExp whether a token without {@code exp} is accepted (it then never expires)
     */
    TokenVerifier(Supplier<KeyRing> keys, String issuer, String audience, long clockSkewSeconds, Clock clock,
            boolean allowWithoutExp) {
        this.keys = keys;
        this.issuer = issuer;
        this.audience = audience;
        this.clockSkewSeconds = clockSkewSeconds;
        this.clock = clock;
        this.clockSkewMs = clockSkewSeconds * 1000;
        this.allowWithoutExp = allowWithoutExp;
    }

    /** The parser over {@code ring}, built once per ring (a few objects, after each key rotation). */
    private JwtParser parserFor(KeyRing ring) {
        Parsing p = parsing;
        if (p != null && p.ring() == ring) {
            return p.parser();
        }
        JwtParserBuilder builder = Jwts.parser()
                .keyLocator(ring)
                .json(new JacksonDeserializer<>())
                .clockSkewSeconds(clockSkewSeconds)
                .clock(() -> new Date(clock.millis()));
        if (issuer != null) {
            builder.requireIssuer(issuer);
        }
        if (audience != null) {
            builder.requireAudience(audience);
        }
        JwtParser parser = builder.build();
        parsing = new Parsing(ring, parser);
        return parser;
    }

    /** The token's rights, expiry and key, or why it is not valid now. */
    Verified verify(String token) {
        KeyRing ring = keys.get();
        if (ring == null) {
            return Verified.refused(TokenRefusal.NO_KEYS);
        }
        Jws<Claims> jws;
        try {
            jws = parserFor(ring).parseSignedClaims(token);
        } catch (KeyRing.UnknownKidException e) {
            if (LOG.isDebugEnabled()) {
                LOG.debug("token refused: {}", Redaction.of(printable(e.getMessage())));
            }
            return Verified.refused(TokenRefusal.UNKNOWN_KEY);
        } catch (JwtException | IllegalArgumentException e) {
            if (LOG.isDebugEnabled()) {
                LOG.debug("token refused: {}", Redaction.of(printable(e.getMessage())));
            }
            return Verified.refused(TokenRefusal.INVALID);
        } catch (RuntimeException e) {
            // jjwt is meant to answer hostile input with a JwtException; anything else is
            // a bug there or here, but the token is still not verified: refuse it.
            LOG.warn("token refused after an unexpected {} (a bug worth reporting)", e.getClass().getName(),
                    Redaction.of(e));
            return Verified.refused(TokenRefusal.INVALID);
        }
        Claims claims = jws.getPayload();
        Date exp = claims.getExpiration();
        if (exp == null && !allowWithoutExp) {
            LOG.debug("token refused: it has no exp claim");
            return Verified.refused(TokenRefusal.EXP_REQUIRED);
        }
        long expiresAtMs = exp == null ? Long.MAX_VALUE : saturatedAdd(exp.getTime(), clockSkewMs);
        VerificationKey key = ring.keyFor(jws.getHeader().getKeyId());
        return new Verified(Rights.fromClaim(claims.get(Rights.CLAIM), claims.getSubject()), expiresAtMs, key, null);
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    /** Message text with control characters replaced, so a token cannot forge log lines. */
    private static String printable(String message) {
        if (message == null) {
            return "";
        }
        StringBuilder text = new StringBuilder(Math.min(message.length(), 500));
        for (int i = 0; i < message.length() && i < 500; i++) {
            char c = message.charAt(i);
            text.append(Character.isISOControl(c) ? '?' : c);
        }
        return text.toString();
    }
}
