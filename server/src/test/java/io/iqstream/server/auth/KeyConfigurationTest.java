package io.iqstream.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Jwks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Unusable key settings fail at startup with a message that says what to do. */
class KeyConfigurationTest {

    @TempDir
    Path dir;

    private static String refusal(AuthSettings settings) {
        return assertThrows(IllegalArgumentException.class, () -> Authorizer.create(settings)).getMessage();
    }

    private static void assertMentions(String message, String... parts) {
        for (String part : parts) {
            assertTrue(message.contains(part), "'" + message + "' should mention '" + part + "'");
        }
    }

    @Test
    void refusesAShortSecretCountingUtf8Bytes() {
        assertEquals("the JWT secret is 31 bytes (UTF-8); it must be at least 32 bytes for HS256 (RFC 7518 section 3.2)",
                refusal(AuthSettings.hmac("x".repeat(31))));
        assertMentions(refusal(AuthSettings.hmac("é".repeat(15))), "30 bytes");
    }

    @Test
    void refusesNoKeyAndSeveralKeys() {
        assertMentions(refusal(new AuthSettings(true, null, null, null, null, null, null, 10, false, null, null)),
                "no key is configured", "--jwt-secret", "--jwt-public-key", "--jwks");
        assertMentions(refusal(new AuthSettings(true, "", null, null, null, null, null, 10, false, null, null)), "no key is configured");
        assertMentions(refusal(new AuthSettings(true, TokenFixtures.SECRET_32, dir.resolve("k.pem"), null, null, null, null, 10, false,
                null, null)),
                "several JWT key sources", "--jwt-secret --jwt-public-key)", "exactly one");
    }

    @Test
    void disabledAuthNeedsNoKey() {
        Authorizer off = Authorizer.create(new AuthSettings(false, null, null, null, null, null, null, 0, false, null, null));
        assertEquals(AuthDecision.ALLOWED, off.authorize(null, "r", Right.PUBLISH));
    }

    @Test
    void refusesNegativeSkewAndCacheSize() {
        assertMentions(refusal(AuthSettings.hmac(TokenFixtures.SECRET_32).withLimits(Duration.ofSeconds(-1), 10)), "clock skew");
        assertMentions(refusal(AuthSettings.hmac(TokenFixtures.SECRET_32).withLimits(Duration.ofSeconds(1), -1)), "cache size");
    }

    @Test
    void refusesMissingFiles() {
        Path missing = dir.resolve("nope.pem");
        assertMentions(refusal(AuthSettings.publicKeyPem(missing)), missing.toString(), "does not exist");
        assertMentions(refusal(AuthSettings.jwks(missing)), missing.toString(), "does not exist");
        assertMentions(refusal(AuthSettings.publicKeyPem(dir)), "cannot read", dir.toString());
    }

    @Test
    void refusesPemFilesWithoutExactlyOnePublicKey() {
        KeyPair a = TokenFixtures.rsa(2048);
        Path garbage = TokenFixtures.write(dir.resolve("garbage.pem"), "hello");
        assertMentions(refusal(AuthSettings.publicKeyPem(garbage)), garbage.toString(), "no '-----BEGIN PUBLIC KEY-----' block");

        Path two = TokenFixtures.write(dir.resolve("two.pem"),
                TokenFixtures.pem(a.getPublic()) + TokenFixtures.pem(TokenFixtures.ed25519().getPublic()));
        assertMentions(refusal(AuthSettings.publicKeyPem(two)), "holds 2 keys", "JWKS");

        String privatePem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder().encodeToString(a.getPrivate().getEncoded()) + "\n-----END PRIVATE KEY-----\n";
        Path priv = TokenFixtures.write(dir.resolve("private.pem"), privatePem);
        assertMentions(refusal(AuthSettings.publicKeyPem(priv)), "private key", "openssl pkey -in " + priv + " -pubout");

        Path pkcs1 = TokenFixtures.write(dir.resolve("pkcs1.pem"), "-----BEGIN RSA PUBLIC KEY-----\nMAA=\n-----END RSA PUBLIC KEY-----\n");
        assertMentions(refusal(AuthSettings.publicKeyPem(pkcs1)), "PKCS#1", "openssl rsa -RSAPublicKey_in");
    }

    @Test
    void refusesDamagedAndUnsupportedPemKeys() {
        Path damaged = TokenFixtures.write(dir.resolve("damaged.pem"),
                "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n");
        assertMentions(refusal(AuthSettings.publicKeyPem(damaged)), damaged.toString(), "neither RSA, EC nor Ed25519/Ed448, or is damaged");

        Path weak = TokenFixtures.writePem(dir, "weak.pem", TokenFixtures.rsa(1024).getPublic());
        assertMentions(refusal(AuthSettings.publicKeyPem(weak)), weak.toString(), "1024 bits", "at least 2048");

        Path secp256k1 = TokenFixtures.write(dir.resolve("k1.pem"), "-----BEGIN PUBLIC KEY-----\n"
                + "MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAEXP3fN3XKvbnkKU5tDLMS7E1r2Wt1lY0h\n"
                + "ZBSIcoJ0ChycfwBP3zyFN5DiOd4o2PReUpKM+CvhvEYAmHH1lnm14w==\n-----END PUBLIC KEY-----\n");
        String message = refusal(AuthSettings.publicKeyPem(secp256k1));
        assertTrue(message.contains(secp256k1.toString()), message);
    }

    @Test
    void acceptsTheKeyOfAnX509Certificate() throws Exception {
        Path keystore = dir.resolve("ks.p12");
        Path cert = dir.resolve("cert.pem");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        run(keytool.toString(), "-genkeypair", "-keystore", keystore.toString(), "-storepass", "changeit",
                "-alias", "k", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=iqstream-test", "-validity", "2");
        run(keytool.toString(), "-exportcert", "-rfc", "-keystore", keystore.toString(), "-storepass", "changeit",
                "-alias", "k", "-file", cert.toString());
        Authorizer authorizer = Authorizer.create(AuthSettings.publicKeyPem(cert));
        assertMentions(authorizer.describe(), "EC P-256 (ES256)");

        java.security.KeyStore ks = java.security.KeyStore.getInstance(keystore.toFile(), "changeit".toCharArray());
        java.security.Key key = ks.getKey("k", "changeit".toCharArray());
        String token = TokenFixtures.sign(key, Jwts.SIG.ES256, null, Instant.now(), TokenFixtures.rights(List.of("*"), List.of()));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(token, "r", Right.PUBLISH));
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool timed out");
        assertEquals(0, p.exitValue(), output);
    }

    @Test
    void refusesJwksFilesThatAreNotUsableKeySets() throws IOException {
        Path notJson = TokenFixtures.write(dir.resolve("a.json"), "not json");
        assertMentions(refusal(AuthSettings.jwks(notJson)), notJson.toString(), "not a valid JWK Set");

        Path noKeys = TokenFixtures.write(dir.resolve("b.json"), "{}");
        assertMentions(refusal(AuthSettings.jwks(noKeys)), "not a valid JWK Set", "keys");

        Path damaged = TokenFixtures.write(dir.resolve("c.json"), "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"zz\"}]}");
        assertMentions(refusal(AuthSettings.jwks(damaged)), "not a valid JWK Set");

        Path oct = TokenFixtures.writeJwks(dir, "d.json", List.of(Jwks.builder().key(Jwts.SIG.HS256.key().build()).id("s").build()));
        assertMentions(refusal(AuthSettings.jwks(oct)), "symmetric 'oct' key", "--jwt-secret");

        KeyPair rsa = TokenFixtures.rsa(2048);
        Path priv = TokenFixtures.writeJwks(dir, "e.json", List.of(Jwks.builder().rsaKeyPair(rsa).id("p").build()));
        assertMentions(refusal(AuthSettings.jwks(priv)), "kid p", "private key material");

        Path dup = TokenFixtures.writeJwks(dir, "f.json", List.of(TokenFixtures.jwk(rsa.getPublic(), "x"),
                TokenFixtures.jwk(TokenFixtures.ed25519().getPublic(), "x")));
        assertMentions(refusal(AuthSettings.jwks(dup)), "two keys with kid x");

        List<io.jsonwebtoken.security.Jwk<?>> noKid = new ArrayList<>();
        noKid.add(Jwks.builder().key(rsa.getPublic()).build());
        noKid.add(TokenFixtures.jwk(TokenFixtures.ed25519().getPublic(), "y"));
        assertMentions(refusal(AuthSettings.jwks(TokenFixtures.writeJwks(dir, "g.json", noKid))), "without 'kid'");

        Path wrongAlg = TokenFixtures.writeJwks(dir, "h.json",
                List.of(Jwks.builder().key(rsa.getPublic()).id("r").algorithm("ES256").build()));
        assertMentions(refusal(AuthSettings.jwks(wrongAlg)), "names alg ES256", "RS256");

        Path onlyEnc = TokenFixtures.writeJwks(dir, "i.json",
                List.of(Jwks.builder().key(rsa.getPublic()).id("e").publicKeyUse("enc").build()));
        assertMentions(refusal(AuthSettings.jwks(onlyEnc)), "no signature-verification key");

        Path weak = TokenFixtures.writeJwks(dir, "j.json", List.of(TokenFixtures.jwk(TokenFixtures.rsa(1024).getPublic(), "w")));
        assertMentions(refusal(AuthSettings.jwks(weak)), weak.toString(), "kid w", "1024 bits");

        Path empty = Files.writeString(dir.resolve("k.json"), "{\"keys\":[]}");
        assertMentions(refusal(AuthSettings.jwks(empty)), empty.toString());
    }

    @Test
    void settingsNeverPrintTheSecret() {
        String text = AuthSettings.hmac(TokenFixtures.SECRET_64).toString();
        assertTrue(!text.contains(TokenFixtures.SECRET_32) && text.contains("64 chars, hidden"), text);
    }
}
