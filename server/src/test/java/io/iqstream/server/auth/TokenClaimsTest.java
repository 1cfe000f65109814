package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsonwebtoken.JwtBuilder;
import io.jsonwebtoken.Jwts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** exp and nbf with clock skew; iss and aud when configured. */
class TokenClaimsTest {

    private final MutableClock clock = MutableClock.atNow();
    private final Instant now = clock.instant();
    private final Object subscribeAll = rights(List.of(), List.of("*"));
    private final AuthSettings settings = AuthSettings.hmac(TokenFixtures.SECRET_64).withLimits(Duration.ofSeconds(30), 0);

    /** A token with the subscribe right and an expiry an hour away. */
    private JwtBuilder token() {
        return tokenWithoutExp().expiration(Date.from(now.plusSeconds(3600)));
    }

    private JwtBuilder tokenWithoutExp() {
        return Jwts.builder().claim("iqstream", subscribeAll).issuedAt(Date.from(now));
    }

    private static String signed(JwtBuilder b) {
        return b.signWith(new SecretKeySpec(TokenFixtures.SECRET_64.getBytes(StandardCharsets.UTF_8), "HmacSHA256"),
                Jwts.SIG.HS256).compact();
    }

    private AuthDecision check(Authorizer authorizer, String token) {
        return authorizer.authorize(token, "run-1", Right.SUBSCRIBE);
    }

    @Test
    void refusesExpiredTokenAndAcceptsOneExpiredWithinTheClockSkew() {
        Authorizer authorizer = Authorizer.create(settings, clock);
        String expiredLongAgo = signed(token().expiration(Date.from(now.minusSeconds(31))));
        String expiredJustNow = signed(token().expiration(Date.from(now.minusSeconds(20))));

        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, expiredLongAgo));
        assertEquals(AuthDecision.ALLOWED, check(authorizer, expiredJustNow));
        clock.advance(Duration.ofSeconds(11));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, expiredJustNow));
    }

    @Test
    void refusesTokenNotYetValidAndAcceptsOneWithinTheClockSkew() {
        Authorizer authorizer = Authorizer.create(settings, clock);
        String later = signed(token().notBefore(Date.from(now.plusSeconds(60))).expiration(Date.from(now.plusSeconds(3600))));
        String almostNow = signed(token().notBefore(Date.from(now.plusSeconds(20))).expiration(Date.from(now.plusSeconds(3600))));

        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, later));
        assertEquals(AuthDecision.ALLOWED, check(authorizer, almostNow));
        clock.advance(Duration.ofSeconds(31));
        assertEquals(AuthDecision.ALLOWED, check(authorizer, later), "valid once nbf - skew has passed");
    }

    @Test
    void zeroClockSkewIsExact() {
        Authorizer authorizer = Authorizer.create(settings.withLimits(Duration.ZERO, 0), clock);
        String expiredSecondsAgo = signed(token().expiration(Date.from(now.minusSeconds(2))));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, expiredSecondsAgo));
    }

    @Test
    void refusesTokenWithoutExpiryByDefaultSayingExpIsRequired() {
        Authorizer authorizer = Authorizer.create(settings, clock);
        String token = signed(tokenWithoutExp());
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, token));
        assertTrue(authorizer.refusalMessage(token).contains("exp is required"), authorizer.refusalMessage(token));
        assertTrue(authorizer.refusalMessage(token).contains("--allow-tokens-without-exp"));
        assertEquals(TokenRefusal.INVALID.message(), authorizer.refusalMessage(signed(token()) + "x"));
        assertEquals(TokenRefusal.MISSING.message(), authorizer.refusalMessage(null));
        assertTrue(authorizer.describe().contains("exp required"), authorizer.describe());
    }

    @Test
    void acceptsTokenWithoutExpiryWhenAllowedAndItNeverExpires() {
        Authorizer authorizer = Authorizer.create(settings.withTokensWithoutExp(true), clock);
        String token = signed(tokenWithoutExp());
        assertEquals(AuthDecision.ALLOWED, check(authorizer, token));
        clock.advance(Duration.ofDays(3650));
        assertEquals(AuthDecision.ALLOWED, check(authorizer, token));
    }

    @Test
    void checksIssuerWhenConfigured() {
        Authorizer authorizer = Authorizer.create(settings.withClaims("https://id.example", null), clock);
        assertEquals(AuthDecision.ALLOWED, check(authorizer, signed(token().issuer("https://id.example"))));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, signed(token().issuer("https://evil.example"))));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, signed(token())), "missing iss");
        assertTrue(authorizer.describe().contains("iss must be https://id.example"), authorizer.describe());
    }

    @Test
    void checksAudienceWhenConfigured() {
        Authorizer authorizer = Authorizer.create(settings.withClaims(null, "iqstream"), clock);
        assertEquals(AuthDecision.ALLOWED, check(authorizer, signed(token().claim("aud", "iqstream"))));
        assertEquals(AuthDecision.ALLOWED, check(authorizer, signed(token().audience().add("other").add("iqstream").and())));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, signed(token().claim("aud", "other"))));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(authorizer, signed(token())), "missing aud");
        for (Object aud : List.of("iqstream", List.of("iqstream"), List.of("x", "iqstream"))) {
            java.util.Map<String, Object> payload = TokenFixtures.payload(now, subscribeAll);
            payload.put("aud", aud);
            String raw = TokenFixtures.rawHmac(TokenFixtures.SECRET_64.getBytes(StandardCharsets.UTF_8), "HmacSHA256",
                    java.util.Map.of("alg", "HS256"), payload);
            assertEquals(AuthDecision.ALLOWED, check(authorizer, raw), "aud " + aud);
        }
    }

    @Test
    void blankIssuerAndAudienceMeanNoCheck() {
        Authorizer authorizer = Authorizer.create(settings.withClaims(" ", ""), clock);
        assertEquals(AuthDecision.ALLOWED, check(authorizer, signed(token().issuer("anyone").claim("aud", "any"))));
    }
}
