package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.MacAlgorithm;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** HS256/384/512 with the UTF-8 bytes of a shared secret. */
class HmacAuthorizerTest {

    private final Instant now = Instant.now();
    private final Object publishRun1 = rights(List.of("run-1"), List.of());

    private String token(String secret, MacAlgorithm alg) {
        return TokenFixtures.sign(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"), alg, null, now, publishRun1);
    }

    @Test
    void acceptsHs256Hs384AndHs512WithALongEnoughSecret() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));
        for (MacAlgorithm alg : List.of(Jwts.SIG.HS256, Jwts.SIG.HS384, Jwts.SIG.HS512)) {
            assertEquals(AuthDecision.ALLOWED,
                    authorizer.authorize(token(TokenFixtures.SECRET_64, alg), "run-1", Right.PUBLISH), alg.getId());
        }
        assertTrue(authorizer.describe().startsWith("HS256/384/512 shared secret (64 bytes)"), authorizer.describe());
    }

    @Test
    void refusesHs384AndHs512WhenTheSecretIsShorterThanTheirHash() {
        String secret48 = TokenFixtures.SECRET_32 + "0123456789abcdef";
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(secret48));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(token(secret48, Jwts.SIG.HS256), "run-1", Right.PUBLISH));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(token(secret48, Jwts.SIG.HS384), "run-1", Right.PUBLISH));
        String hs512 = TokenFixtures.rawHmac(secret48.getBytes(StandardCharsets.UTF_8), "HmacSHA512",
                java.util.Map.of("alg", "HS512"), TokenFixtures.payload(now, publishRun1));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(hs512, "run-1", Right.PUBLISH));
        assertTrue(authorizer.describe().contains("HS256/384 shared secret (48 bytes; HS512 needs >= 64)"), authorizer.describe());
    }

    @Test
    void usesTheUtf8BytesOfTheSecret() {
        String secret = "é".repeat(16); // 16 characters, 32 bytes
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(secret));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(token(secret, Jwts.SIG.HS256), "run-1", Right.PUBLISH));
    }

    @Test
    void refusesTokenSignedWithAnotherSecret() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));
        String other = TokenFixtures.SECRET_64.replace('0', '1');
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(token(other, Jwts.SIG.HS256), "run-1", Right.PUBLISH));
    }

    @Test
    void refusesTokenWhosePayloadWasChanged() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));
        String[] parts = token(TokenFixtures.SECRET_64, Jwts.SIG.HS256).split("\\.");
        String widened = TokenFixtures.b64(TokenFixtures.json(TokenFixtures.payload(now, rights(List.of("*"), List.of("*")))));
        String tampered = parts[0] + "." + widened + "." + parts[2];
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(tampered, "run-2", Right.PUBLISH));
    }
}
