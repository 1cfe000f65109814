package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.b64;
import static io.iqstream.server.auth.TokenFixtures.payload;
import static io.iqstream.server.auth.TokenFixtures.rights;
import static io.iqstream.server.auth.TokenFixtures.sign;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Jwks;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Unsigned tokens and tokens whose algorithm does not belong to the configured key are refused. */
class AlgorithmConfusionTest {

    @TempDir
    Path dir;

    private final Instant now = Instant.now();
    private final Object everything = rights(List.of("*"), List.of("*"));

    private static Map<String, Object> header(String alg) {
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("alg", alg);
        h.put("typ", "JWT");
        return h;
    }

    @Test
    void refusesUnsignedTokenWithAlgNone() {
        Authorizer hmac = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));
        Authorizer rsa = Authorizer.create(AuthSettings.publicKeyPem(
                TokenFixtures.writePem(dir, "k.pem", TokenFixtures.rsa(2048).getPublic())));
        for (String alg : List.of("none", "None", "NONE")) {
            String noSignature = TokenFixtures.raw(header(alg), payload(now, everything), "");
            String junkSignature = TokenFixtures.raw(header(alg), payload(now, everything), b64(new byte[32]));
            for (Authorizer authorizer : List.of(hmac, rsa)) {
                assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(noSignature, "r", Right.PUBLISH), alg);
                assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(junkSignature, "r", Right.PUBLISH), alg);
            }
        }
        String jjwtUnsigned = Jwts.builder().claim("iqstream", everything).compact();
        assertEquals(AuthDecision.UNAUTHENTICATED, hmac.authorize(jjwtUnsigned, "r", Right.PUBLISH));
    }

    @Test
    void refusesHmacTokenKeyedWithTheConfiguredRsaPublicKey() throws Exception {
        KeyPair pair = TokenFixtures.rsa(2048);
        Path pem = TokenFixtures.writePem(dir, "k.pem", pair.getPublic());
        byte[] pemBytes = Files.readAllBytes(pem);
        byte[] derBytes = pair.getPublic().getEncoded();
        byte[] jwkBytes = Jwks.json(TokenFixtures.jwk(pair.getPublic(), "k")).getBytes(StandardCharsets.UTF_8);
        Path jwks = TokenFixtures.writeJwks(dir, "keys.json", List.of(TokenFixtures.jwk(pair.getPublic(), "k")));

        for (Authorizer authorizer : List.of(Authorizer.create(AuthSettings.publicKeyPem(pem)),
                Authorizer.create(AuthSettings.jwks(jwks)))) {
            for (byte[] keyBytes : List.of(pemBytes, derBytes, jwkBytes)) {
                for (String[] alg : new String[][] {{"HS256", "HmacSHA256"}, {"HS384", "HmacSHA384"}, {"HS512", "HmacSHA512"}}) {
                    Map<String, Object> h = header(alg[0]);
                    h.put("kid", "k");
                    String forged = TokenFixtures.rawHmac(keyBytes, alg[1], h, payload(now, everything));
                    assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(forged, "r", Right.PUBLISH),
                            alg[0] + " keyed with " + keyBytes.length + " public-key bytes");
                }
            }
        }
    }

    @Test
    void refusesTokenWhoseAlgorithmDoesNotMatchTheKeyType() {
        KeyPair rsa = TokenFixtures.rsa(2048);
        KeyPair p256 = TokenFixtures.ec("secp256r1");
        KeyPair p384 = TokenFixtures.ec("secp384r1");
        KeyPair ed = TokenFixtures.ed25519();
        Authorizer rsaAuthorizer = Authorizer.create(AuthSettings.publicKeyPem(TokenFixtures.writePem(dir, "rsa.pem", rsa.getPublic())));
        Authorizer ecAuthorizer = Authorizer.create(AuthSettings.publicKeyPem(TokenFixtures.writePem(dir, "ec.pem", p256.getPublic())));
        Authorizer edAuthorizer = Authorizer.create(AuthSettings.publicKeyPem(TokenFixtures.writePem(dir, "ed.pem", ed.getPublic())));
        Authorizer hmacAuthorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));

        String es256 = sign(p256.getPrivate(), Jwts.SIG.ES256, null, now, everything);
        String rs256 = sign(rsa.getPrivate(), Jwts.SIG.RS256, null, now, everything);
        String es384 = sign(p384.getPrivate(), Jwts.SIG.ES384, null, now, everything);
        String eddsa = sign(ed.getPrivate(), Jwts.SIG.EdDSA, null, now, everything);

        assertEquals(AuthDecision.UNAUTHENTICATED, rsaAuthorizer.authorize(es256, "r", Right.PUBLISH));
        assertEquals(AuthDecision.UNAUTHENTICATED, rsaAuthorizer.authorize(eddsa, "r", Right.PUBLISH));
        assertEquals(AuthDecision.UNAUTHENTICATED, ecAuthorizer.authorize(rs256, "r", Right.PUBLISH));
        assertEquals(AuthDecision.UNAUTHENTICATED, ecAuthorizer.authorize(es384, "r", Right.PUBLISH), "P-256 key, ES384 token");
        assertEquals(AuthDecision.UNAUTHENTICATED, edAuthorizer.authorize(es256, "r", Right.PUBLISH));
        for (String token : List.of(es256, rs256, eddsa)) {
            assertEquals(AuthDecision.UNAUTHENTICATED, hmacAuthorizer.authorize(token, "r", Right.PUBLISH));
        }
        // the genuine pairings do pass, so the refusals above are about the algorithm
        assertEquals(AuthDecision.ALLOWED, rsaAuthorizer.authorize(rs256, "r", Right.PUBLISH));
        assertEquals(AuthDecision.ALLOWED, ecAuthorizer.authorize(es256, "r", Right.PUBLISH));
        assertEquals(AuthDecision.ALLOWED, edAuthorizer.authorize(eddsa, "r", Right.PUBLISH));
    }

    @Test
    void refusesATokenWhoseHeaderAlgorithmWasRewritten() {
        KeyPair rsa = TokenFixtures.rsa(2048);
        Authorizer authorizer = Authorizer.create(AuthSettings.publicKeyPem(TokenFixtures.writePem(dir, "rsa.pem", rsa.getPublic())));
        String rs256 = sign(rsa.getPrivate(), Jwts.SIG.RS256, null, now, everything);
        String[] parts = rs256.split("\\.");
        for (String alg : List.of("PS256", "RS512", "HS256", "none")) {
            String rewritten = b64(TokenFixtures.json(header(alg))) + "." + parts[1] + "." + parts[2];
            assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(rewritten, "r", Right.PUBLISH), alg);
        }
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(rs256, "r", Right.PUBLISH));
    }

    @Test
    void ignoresAKeyEmbeddedInTheTokenHeader() {
        KeyPair configured = TokenFixtures.ec("secp256r1");
        KeyPair attacker = TokenFixtures.ec("secp256r1");
        Authorizer authorizer = Authorizer.create(AuthSettings.jwks(TokenFixtures.writeJwks(dir, "keys.json",
                List.of(TokenFixtures.jwk(configured.getPublic(), "k")))));
        var builder = TokenFixtures.builder(now, everything);
        builder.header().keyId("k").add("jwk", TokenFixtures.jwk(attacker.getPublic(), "k"));
        String token = TokenFixtures.signWith(builder, attacker.getPrivate(), Jwts.SIG.ES256);

        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(token, "r", Right.PUBLISH));
    }

    @Test
    void refusesMalformedTokens() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));
        String valid = TokenFixtures.hmacToken(TokenFixtures.SECRET_64, now, everything);
        String[] parts = valid.split("\\.");
        List<String> bad = List.of("", "x", "a.b", "a.b.c", "...", valid + "x", valid + ".", parts[0] + "." + parts[1],
                parts[0] + "." + b64("{\"iqstream\":{\"publish\":[\"*\"]}}".getBytes(StandardCharsets.UTF_8)) + "." + parts[2],
                b64("{\"alg\":7}".getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + "." + parts[2],
                b64("[]".getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + "." + parts[2],
                b64("{\"alg\":\"HS256\",\"crit\":[\"exp\"]}".getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + "." + parts[2],
                parts[0] + ".!!!." + parts[2], "Bearer " + valid, "x".repeat(Authorizer.MAX_TOKEN_CHARS + 1));
        for (String token : bad) {
            assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(token, "r", Right.PUBLISH),
                    token.length() > 80 ? token.substring(0, 80) : token);
        }
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(null, "r", Right.PUBLISH));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(valid, "r", Right.PUBLISH));
    }
}
