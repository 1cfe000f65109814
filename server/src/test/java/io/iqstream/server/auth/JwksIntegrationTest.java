package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.jwk;
import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.jsonwebtoken.Jwts;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --jwks} against real servers: an HTTPS key server with a self-signed CA given by {@code --jwks-ca}
 * (made by keytool), a slow or failing key server, a flood of unknown kids, and a JWKS file that changes. Token
 * checks go to {@code GET /v1/runs/{id}}: 404 (no such run) means the token was accepted, 401 that it was not.
 */
class JwksIntegrationTest {
    private static final String RUN_PATH = "/v1/runs/jwks-run";

    @TempDir
    static Path certs;

    private JwksServer keyServer;
    private TestServer server;

    @BeforeAll
    static void makeCertificate() throws Exception {
        JwksServer.selfSignedCertificate(certs);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (keyServer != null) {
            keyServer.close();
        }
    }

    private static KeyPair es256() {
        return TokenFixtures.ec("secp256r1");
    }

    private static String token(KeyPair pair, String kid) {
        return TokenFixtures.sign(pair.getPrivate(), Jwts.SIG.ES256, kid, Instant.now(), rights(List.of(), List.of("*")));
    }

    private int status(String token) throws Exception {
        return Http.get(server.base() + RUN_PATH, "Authorization", "Bearer " + token).statusCode();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for: " + what);
            Thread.sleep(50);
        }
    }

    private BooleanSupplier statusIs(int expected, String token) {
        return () -> {
            try {
                return status(token) == expected;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private String get(String path) {
        try {
            return Http.get(server.base() + path).body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private long metric(String line) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(line) + " ([0-9.]+)$").matcher(get("/metrics"));
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }

    @Test
    void rotatesKeysOverHttpsWithAPrivateCaWithoutRestart() throws Exception {
        keyServer = JwksServer.https(certs.resolve("server.p12"));
        KeyPair k1 = es256();
        KeyPair k2 = es256();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1")));
        server = TestServer.start("--jwks", keyServer.uri().toString(), "--jwks-ca", certs.resolve("ca.pem").toString(),
                "--jwks-refresh-min", "1s", "--await-run", "0ms");
        assertEquals(404, status(token(k1, "k1")), "k1 accepted");
        assertEquals("ready\n", get("/readyz"));

        keyServer.serve(List.of(jwk(k2.getPublic(), "k2")));
        String t2 = token(k2, "k2");
        HttpResponse<String> first = Http.get(server.base() + RUN_PATH, "Authorization", "Bearer " + t2);
        assertEquals(401, first.statusCode(), "k2 is not known before a refresh");
        assertTrue(first.body().contains("kid"), first.body());
        await("k2 accepted after the early refresh", statusIs(404, t2));
        assertEquals(401, status(token(k1, "k1")), "k1 left the set");
        assertTrue(metric("iqstream_jwks_early_refreshes_total") >= 1);
        assertEquals(1, metric("iqstream_jwks_keys"));
    }

    @Test
    void waitsForASlowKeyServerAtStart() throws Exception {
        keyServer = JwksServer.http();
        KeyPair k1 = es256();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1")));
        CountDownLatch release = new CountDownLatch(1);
        keyServer.hold(release);
        CompletableFuture<TestServer> starting = new CompletableFuture<>();
        Thread starter = new Thread(() -> {
            try {
                starting.complete(TestServer.start("--jwks", keyServer.uri().toString(), "--await-run", "0ms",
                        "--jwks-timeout", "30s"));
            } catch (RuntimeException e) {
                starting.completeExceptionally(e);
            }
        }, "test-server-start");
        starter.start();
        await("the key server is asked", () -> keyServer.requests() >= 1);
        assertFalse(starting.isDone(), "start waits for the first usable set");
        release.countDown();
        keyServer.hold(null);
        server = starting.get(30, TimeUnit.SECONDS);
        assertEquals(404, status(token(k1, "k1")));
        assertEquals("ready\n", get("/readyz"));
    }

    @Test
    void failsClearlyWhenNoUsableSetComesWithinTheTimeout() throws Exception {
        keyServer = JwksServer.http();
        keyServer.hold(new CountDownLatch(1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TestServer.start(
                "--jwks", keyServer.uri().toString(), "--jwks-timeout", "1s"));
        assertTrue(e.getMessage().contains("--jwks-timeout") && e.getMessage().contains(keyServer.uri().toString()),
                e.getMessage());

        try (JwksServer tls = JwksServer.https(certs.resolve("server.p12"))) {
            tls.serve(List.of(jwk(es256().getPublic(), "k1")));
            IllegalArgumentException untrusted = assertThrows(IllegalArgumentException.class, () -> TestServer.start(
                    "--jwks", tls.uri().toString(), "--jwks-timeout", "2s"));
            assertTrue(untrusted.getMessage().contains("tls"), "without --jwks-ca the self-signed CA is not trusted: "
                    + untrusted.getMessage());
        }
    }

    @Test
    void outageKeepsKnownKeysWorkingAndReadyzTurns503OnlyAfterTheMaximumAge() throws Exception {
        keyServer = JwksServer.http();
        KeyPair k1 = es256();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1")));
        server = TestServer.start("--jwks", keyServer.uri().toString(), "--await-run", "0ms",
                "--jwks-refresh-min", "1s", "--jwks-refresh-max", "1s", "--jwks-max-age", "4s");
        String t1 = token(k1, "k1");
        keyServer.answer(500);
        await("a failed refresh is counted",
                () -> metric("iqstream_jwks_refresh_failures_total{reason=\"http_status\"}") >= 1);
        assertEquals(404, status(t1), "known keys keep working during the outage");
        assertTrue(metric("iqstream_jwks_last_success_timestamp_seconds") > 0);
        await("/readyz 503 once the set is older than --jwks-max-age",
                () -> get("/readyz").equals("signing keys not loaded or stale\n"));
        assertEquals(404, status(t1), "still verified with the last good set");
        assertEquals(1, metric("iqstream_jwks_stale"));
        keyServer.answer(200);
        await("ready again once the key server answers", () -> get("/readyz").equals("ready\n"));
    }

    @Test
    void aFloodOfRandomKidsDoesNotHammerTheKeyServer() throws Exception {
        keyServer = JwksServer.http();
        keyServer.serve(List.of(jwk(es256().getPublic(), "k1")));
        server = TestServer.start("--jwks", keyServer.uri().toString(), "--await-run", "0ms",
                "--jwks-refresh-min", "1h", "--jwks-refresh-max", "1h", "--jwks-max-age", "2h");
        KeyPair attacker = es256();
        for (int i = 0; i < 200; i++) {
            assertEquals(401, status(token(attacker, UUID.randomUUID().toString())));
        }
        assertEquals(200, metric("iqstream_jwks_unknown_kid_total"));
        assertEquals(1, keyServer.requests(), "only the start fetch: the early refresh waits for the floor");
    }

    @Test
    void jwksFileIsReReadWhenItChanges(@TempDir Path dir) throws Exception {
        KeyPair k1 = es256();
        KeyPair k2 = es256();
        Path file = TokenFixtures.writeJwks(dir, "jwks.json", List.of(jwk(k1.getPublic(), "k1")));
        server = TestServer.start("--jwks", file.toString(), "--await-run", "0ms", "--jwks-refresh-min", "1s");
        assertEquals(404, status(token(k1, "k1")));
        TokenFixtures.writeJwks(dir, "jwks.json.tmp", List.of(jwk(k2.getPublic(), "k2")));
        java.nio.file.Files.move(dir.resolve("jwks.json.tmp"), file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        await("k2 accepted after the file changed", statusIs(404, token(k2, "k2")));
        assertEquals(401, status(token(k1, "k1")), "k1 left the file");
        TokenFixtures.write(file, "{\"keys\": [");
        await("a bad file counts as a failure", () -> metric("iqstream_jwks_refresh_failures_total{reason=\"bad_json\"}") >= 1);
        assertEquals(404, status(token(k2, "k2")), "a file that does not parse keeps the set in use");
    }
}
