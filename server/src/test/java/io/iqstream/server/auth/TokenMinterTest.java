package io.iqstream.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jsonwebtoken.Claims;
import io.jsonwebtoken.Jwts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** HS256 tokens with the iqstream claim. */
class TokenMinterTest {

    @Test
    void mintsAnHs256TokenWithTheRightsClaimAndExpiry() {
        MutableClock clock = new MutableClock(Instant.parse("2030-01-01T00:00:00Z"));
        String token = new TokenMinter(TokenFixtures.SECRET_32, clock).mint(List.of("p*"), List.of("s1", "s2"), Duration.ofMinutes(5));

        Claims claims = Jwts.parser()
                .verifyWith(new SecretKeySpec(TokenFixtures.SECRET_32.getBytes(StandardCharsets.UTF_8), "HmacSHA256"))
                .clock(() -> java.util.Date.from(clock.instant())).build()
                .parseSignedClaims(token).getPayload();
        assertEquals(Map.of("publish", List.of("p*"), "subscribe", List.of("s1", "s2")), claims.get("iqstream"));
        assertEquals(Instant.parse("2030-01-01T00:05:00Z"), claims.getExpiration().toInstant());
        assertEquals(Instant.parse("2030-01-01T00:00:00Z"), claims.getIssuedAt().toInstant());
        String header = new String(java.util.Base64.getUrlDecoder().decode(token.substring(0, token.indexOf('.'))),
                StandardCharsets.UTF_8);
        assertEquals("{\"alg\":\"HS256\"}", header);
    }

    @Test
    void nullListsGrantNothing() {
        String token = new TokenMinter(TokenFixtures.SECRET_32).mint(null, null, Duration.ofMinutes(1));
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_32));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorizeAny(token, "run-1"));
    }

    @Test
    void refusesAShortSecretAndANonPositiveLifetime() {
        IllegalArgumentException shortSecret = assertThrows(IllegalArgumentException.class, () -> new TokenMinter("short"));
        assertEquals("the JWT secret is 5 bytes (UTF-8); it must be at least 32 bytes for HS256", shortSecret.getMessage());
        TokenMinter minter = new TokenMinter(TokenFixtures.SECRET_32);
        assertThrows(IllegalArgumentException.class, () -> minter.mint(List.of(), List.of(), Duration.ZERO));
    }
}
