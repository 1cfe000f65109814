package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.rights;
import static io.iqstream.server.auth.TokenFixtures.sign;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Jwks;
import io.jsonwebtoken.security.SecureDigestAlgorithm;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** RS/PS, ES and EdDSA tokens verified with public keys from PEM and JWKS files. */
class PublicKeyAuthorizerTest {

    @TempDir
    Path dir;

    private final Instant now = Instant.now();
    private final Object subscribeRun1 = rights(List.of(), List.of("run-1"));

    /** A key family and one algorithm it signs with. */
    record Family(String name, Supplier<KeyPair> keys, SecureDigestAlgorithm<?, ?> alg) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Family> families() {
        return Stream.of(
                new Family("RS256", () -> TokenFixtures.rsa(2048), Jwts.SIG.RS256),
                new Family("RS384", () -> TokenFixtures.rsa(2048), Jwts.SIG.RS384),
                new Family("RS512", () -> TokenFixtures.rsa(2048), Jwts.SIG.RS512),
                new Family("PS256", () -> TokenFixtures.rsa(2048), Jwts.SIG.PS256),
                new Family("ES256", () -> TokenFixtures.ec("secp256r1"), Jwts.SIG.ES256),
                new Family("ES384", () -> TokenFixtures.ec("secp384r1"), Jwts.SIG.ES384),
                new Family("ES512", () -> TokenFixtures.ec("secp521r1"), Jwts.SIG.ES512),
                new Family("EdDSA Ed25519", TokenFixtures::ed25519, Jwts.SIG.EdDSA),
                new Family("EdDSA Ed448", TokenFixtures::ed448, Jwts.SIG.EdDSA));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void acceptsTokenSignedWithThePemKeysPrivateHalf(Family family) {
        KeyPair pair = family.keys().get();
        Authorizer authorizer = Authorizer.create(AuthSettings.publicKeyPem(TokenFixtures.writePem(dir, "k.pem", pair.getPublic())));
        String token = sign(pair.getPrivate(), family.alg(), "ignored-kid", now, subscribeRun1);

        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(token, "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(token, "run-1", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(token, "run-2", Right.SUBSCRIBE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void refusesTokenSignedWithAnotherKeyOfTheSameKind(Family family) {
        Authorizer authorizer = Authorizer.create(AuthSettings.publicKeyPem(
                TokenFixtures.writePem(dir, "k.pem", family.keys().get().getPublic())));
        String forged = sign(family.keys().get().getPrivate(), family.alg(), null, now, subscribeRun1);

        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(forged, "run-1", Right.SUBSCRIBE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void selectsTheJwksKeyByKid(Family family) {
        KeyPair pair = family.keys().get();
        KeyPair other = TokenFixtures.ec("secp256r1");
        Path jwks = TokenFixtures.writeJwks(dir, "keys.json", List.of(
                TokenFixtures.jwk(other.getPublic(), "other"), TokenFixtures.jwk(pair.getPublic(), "mine")));
        Authorizer authorizer = Authorizer.create(AuthSettings.jwks(jwks));

        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(
                sign(pair.getPrivate(), family.alg(), "mine", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(pair.getPrivate(), family.alg(), "other", now, subscribeRun1), "run-1", Right.SUBSCRIBE),
                "signed by 'mine' but naming 'other'");
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(pair.getPrivate(), family.alg(), "unknown", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(pair.getPrivate(), family.alg(), null, now, subscribeRun1), "run-1", Right.SUBSCRIBE),
                "no kid and two keys: which one is ambiguous");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void usesTheOnlyJwksKeyForATokenWithoutKid(Family family) {
        KeyPair pair = family.keys().get();
        Authorizer authorizer = Authorizer.create(AuthSettings.jwks(TokenFixtures.writeJwks(dir, "keys.json",
                List.of(TokenFixtures.jwk(pair.getPublic(), "only")))));

        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(
                sign(pair.getPrivate(), family.alg(), null, now, subscribeRun1), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(pair.getPrivate(), family.alg(), "not-only", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
    }

    @Test
    void skipsEncryptionKeysInTheJwks() {
        KeyPair sig = TokenFixtures.rsa(2048);
        KeyPair enc = TokenFixtures.rsa(2048);
        Path jwks = TokenFixtures.writeJwks(dir, "keys.json", List.of(
                Jwks.builder().key(enc.getPublic()).id("enc").publicKeyUse("enc").build(),
                Jwks.builder().key(sig.getPublic()).id("sig").publicKeyUse("sig").build()));
        Authorizer authorizer = Authorizer.create(AuthSettings.jwks(jwks));

        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(
                sign(sig.getPrivate(), Jwts.SIG.RS256, null, now, subscribeRun1), "run-1", Right.SUBSCRIBE),
                "the one signature key is the only key");
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(enc.getPrivate(), Jwts.SIG.RS256, "enc", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
    }

    @Test
    void holdsAJwkToTheAlgItNames() {
        KeyPair pair = TokenFixtures.rsa(2048);
        Path jwks = TokenFixtures.writeJwks(dir, "keys.json", List.of(
                Jwks.builder().key(pair.getPublic()).id("k").algorithm("RS256").build()));
        Authorizer authorizer = Authorizer.create(AuthSettings.jwks(jwks));

        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(
                sign(pair.getPrivate(), Jwts.SIG.RS256, "k", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(pair.getPrivate(), Jwts.SIG.PS256, "k", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(
                sign(pair.getPrivate(), Jwts.SIG.RS512, "k", now, subscribeRun1), "run-1", Right.SUBSCRIBE));
    }

    @Test
    void describesTheKeysForTheStartupLog() {
        Path pem = TokenFixtures.writePem(dir, "k.pem", TokenFixtures.ec("secp256r1").getPublic());
        String pemText = Authorizer.create(AuthSettings.publicKeyPem(pem)).describe();
        assertTrue(pemText.contains("EC P-256 (ES256)") && pemText.contains(pem.toString()), pemText);

        Path jwks = TokenFixtures.writeJwks(dir, "keys.json", List.of(
                TokenFixtures.jwk(TokenFixtures.rsa(2048).getPublic(), "a"), TokenFixtures.jwk(TokenFixtures.ed25519().getPublic(), "b")));
        String jwksText = Authorizer.create(AuthSettings.jwks(jwks)).describe();
        assertTrue(jwksText.contains("2 keys") && jwksText.contains("kid a: RSA 2048-bit")
                && jwksText.contains("kid b: Ed25519 (EdDSA)"), jwksText);
    }
}
