package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.jwk;
import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Jwks;
import io.jsonwebtoken.security.SecureDigestAlgorithm;
import java.security.KeyPair;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The JWKS refresher against a real key server on 127.0.0.1, driven by hand under a controlled clock (no
 * refresh thread, no sleeps): rotation, ETag/304, max-age within the floor and ceiling, outages, readiness, the
 * unknown-kid early refresh and its rate limit, and cached tokens of removed keys.
 */
class JwksRefresherTest {
    private static final long MIN_MS = 10_000;
    private static final long MAX_MS = 60_000;
    private static final long MAX_AGE_MS = 120_000;

    /** The three families of asymmetric keys a JWKS holds. */
    enum Family {
        RS256(Jwts.SIG.RS256, () -> TokenFixtures.rsa(2048)),
        ES256(Jwts.SIG.ES256, () -> TokenFixtures.ec("secp256r1")),
        EDDSA(Jwts.SIG.EdDSA, TokenFixtures::ed25519);

        final SecureDigestAlgorithm<?, ?> alg;
        final Supplier<KeyPair> keys;

        Family(SecureDigestAlgorithm<?, ?> alg, Supplier<KeyPair> keys) {
            this.alg = alg;
            this.keys = keys;
        }
    }

    private final MutableClock clock = MutableClock.atNow();
    private final Object subscribeAll = rights(List.of(), List.of("*"));
    private JwksServer keyServer;
    private Authorizer authorizer;

    @BeforeEach
    void startKeyServer() throws Exception {
        keyServer = JwksServer.http();
    }

    @AfterEach
    void stop() {
        if (authorizer != null) {
            authorizer.close();
        }
        keyServer.close();
    }

    private Authorizer authorizer(long timeoutMs) {
        authorizer = Authorizer.create(AuthSettings.jwksUrl(keyServer.uri(),
                new JwksOptions(timeoutMs, MIN_MS, MAX_MS, MAX_AGE_MS, null)), clock, false);
        return authorizer;
    }

    private JwksRefresher refresher() {
        return authorizer.refresher();
    }

    private String token(KeyPair pair, Family family, String kid) {
        return TokenFixtures.sign(pair.getPrivate(), family.alg, kid, clock.instant(), subscribeAll);
    }

    private AuthDecision check(String token) {
        return authorizer.authorize(token, "run-1", Right.SUBSCRIBE);
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void newKidIsAcceptedAndRemovedKidRefusedWithoutRestart(Family family) {
        KeyPair k1 = family.keys.get();
        KeyPair k2 = family.keys.get();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1")));
        authorizer(5_000);
        assertFalse(authorizer.isReady(), "not ready before the first fetch");
        assertTrue(refresher().runOnce());
        assertTrue(authorizer.isReady());
        String t1 = token(k1, family, "k1");
        String t2 = token(k2, family, "k2");
        assertEquals(AuthDecision.ALLOWED, check(t1));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(t2), "k2 is not published yet");
        assertTrue(authorizer.refusalMessage(t2).contains("kid"), authorizer.refusalMessage(t2));

        keyServer.serve(List.of(jwk(k2.getPublic(), "k2")));
        assertFalse(refresher().runOnce(), "the early refresh waits for the floor");
        clock.advance(Duration.ofMillis(MIN_MS));
        assertTrue(refresher().runOnce(), "the unknown kid asked for an early refresh");
        assertEquals(AuthDecision.ALLOWED, check(t2), "the new key works without a restart");
        assertEquals(AuthDecision.UNAUTHENTICATED, check(t1), "k1 left the set: its cached token is refused");
        assertEquals(2, keyServer.requests());
    }

    @Test
    void cachedTokenOfARemovedKeyIsRefusedAfterTheScheduledRefresh() {
        KeyPair k1 = Family.ES256.keys.get();
        KeyPair k2 = Family.ES256.keys.get();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1"), jwk(k2.getPublic(), "k2")));
        authorizer(5_000);
        refresher().runOnce();
        String t1 = token(k1, Family.ES256, "k1");
        String t2 = token(k2, Family.ES256, "k2");
        assertEquals(AuthDecision.ALLOWED, check(t1));
        assertEquals(AuthDecision.ALLOWED, check(t2));
        long verified = authorizer.verificationCount();
        assertEquals(AuthDecision.ALLOWED, check(t1));
        assertEquals(verified, authorizer.verificationCount(), "served from the token cache");

        keyServer.serve(List.of(jwk(k2.getPublic(), "k2")));
        clock.advance(Duration.ofMillis(MAX_MS));
        assertTrue(refresher().runOnce());
        assertEquals(AuthDecision.UNAUTHENTICATED, check(t1), "k1's cached token no longer counts");
        long before = authorizer.verificationCount();
        assertEquals(AuthDecision.ALLOWED, check(t2));
        assertEquals(before, authorizer.verificationCount(), "k2 stayed in the set: its cached token still counts");
    }

    @Test
    void conditionalRequestGets304AndKeepsTheSet() {
        KeyPair k1 = Family.ES256.keys.get();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1")));
        authorizer(5_000);
        refresher().runOnce();
        assertNull(keyServer.lastIfNoneMatch(), "the first fetch is not conditional");
        clock.advance(Duration.ofMillis(MAX_MS));
        assertTrue(refresher().runOnce());
        assertEquals("\"v1\"", keyServer.lastIfNoneMatch());
        assertEquals(1, keyServer.notModifiedAnswers());
        assertEquals(AuthDecision.ALLOWED, check(token(k1, Family.ES256, "k1")));
        String metrics = authorizer.metricsText();
        assertTrue(metrics.contains("iqstream_jwks_fetches_total{result=\"updated\"} 1\n"), metrics);
        assertTrue(metrics.contains("iqstream_jwks_fetches_total{result=\"unchanged\"} 1\n"), metrics);
        assertTrue(metrics.contains("iqstream_jwks_keys 1\n"), metrics);
    }

    @Test
    void maxAgeIsHonouredWithinTheFloorAndCeiling() {
        keyServer.serve(List.of(jwk(Family.ES256.keys.get().getPublic(), "k1")));
        authorizer(5_000);
        long[][] cases = {{30, 30_000}, {1, MIN_MS}, {0, MIN_MS}, {3600, MAX_MS}};
        for (long[] c : cases) {
            keyServer.cacheControl("public, max-age=" + c[0]);
            clock.advance(Duration.ofMillis(MAX_MS));
            assertTrue(refresher().runOnce());
            long now = clock.millis();
            assertEquals(now + c[1], refresher().nextDueMs(), "max-age=" + c[0]);
            int requests = keyServer.requests();
            clock.advance(Duration.ofMillis(c[1] - 1));
            assertFalse(refresher().runOnce(), "not due before max-age=" + c[0] + " (held in range) has passed");
            clock.advance(Duration.ofMillis(1));
            assertTrue(refresher().runOnce());
            assertEquals(requests + 1, keyServer.requests());
        }
        keyServer.cacheControl("no-store");
        clock.advance(Duration.ofMillis(MAX_MS));
        refresher().runOnce();
        assertEquals(clock.millis() + MIN_MS, refresher().nextDueMs(), "no-store: the floor");
        keyServer.cacheControl(null);
        clock.advance(Duration.ofMillis(MAX_MS));
        refresher().runOnce();
        assertEquals(clock.millis() + MAX_MS, refresher().nextDueMs(), "no max-age: the ceiling");
    }

    @Test
    void outageKeepsTheLastGoodSetAndCountsEachReason() throws Exception {
        KeyPair k1 = Family.ES256.keys.get();
        keyServer.serve(List.of(jwk(k1.getPublic(), "k1")));
        authorizer(500);
        refresher().runOnce();
        String t1 = token(k1, Family.ES256, "k1");

        keyServer.answer(500);
        clock.advance(Duration.ofMillis(MAX_MS));
        assertTrue(refresher().runOnce());
        assertEquals(1, refresher().failures(JwksFailure.HTTP_STATUS));
        assertTrue(authorizer.isReady(), "within --jwks-max-age");
        keyServer.serveText("{\"keys\": [");
        clock.advance(Duration.ofMillis(MAX_MS));
        refresher().runOnce();
        assertEquals(1, refresher().failures(JwksFailure.BAD_JSON));
        keyServer.serveText("{\"keys\": [{\"kty\":\"oct\",\"k\":\"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA\"}]}");
        clock.advance(Duration.ofMillis(MAX_MS));
        refresher().runOnce();
        assertEquals(1, refresher().failures(JwksFailure.NO_USABLE_KEY));
        CountDownLatch never = new CountDownLatch(1);
        keyServer.hold(never);
        clock.advance(Duration.ofMillis(MAX_MS));
        refresher().runOnce();
        assertEquals(1, refresher().failures(JwksFailure.TIMEOUT));
        keyServer.hold(null);
        never.countDown();

        assertEquals(AuthDecision.ALLOWED, check(t1), "tokens signed with known keys are still accepted");
        String metrics = authorizer.metricsText();
        for (String reason : List.of("http_status", "bad_json", "no_usable_key", "timeout")) {
            assertTrue(metrics.contains("iqstream_jwks_refresh_failures_total{reason=\"" + reason + "\"} 1\n"), metrics);
        }
        assertTrue(metrics.contains("iqstream_jwks_keys 1\n"), metrics);

        keyServer.close();
        clock.advance(Duration.ofMillis(MAX_MS));
        refresher().runOnce();
        assertEquals(1, refresher().failures(JwksFailure.IO));
        assertEquals(AuthDecision.ALLOWED, check(token(k1, Family.ES256, "k1")));
    }

    @Test
    void readinessTurnsFalseOnlyOnceTheLastGoodSetIsOlderThanTheMaximumAge() {
        keyServer.serve(List.of(jwk(Family.ES256.keys.get().getPublic(), "k1")));
        authorizer(5_000);
        refresher().runOnce();
        keyServer.answer(503);
        for (long elapsed = 0; elapsed + MIN_MS <= MAX_AGE_MS; elapsed += MIN_MS) {
            clock.advance(Duration.ofMillis(MIN_MS));
            refresher().runOnce();
            assertTrue(authorizer.isReady(), "still ready " + (elapsed + MIN_MS) + " ms into the outage");
        }
        clock.advance(Duration.ofMillis(1));
        assertFalse(authorizer.isReady(), "the set is now older than --jwks-max-age");
        assertTrue(authorizer.metricsText().contains("iqstream_jwks_stale 1\n"));
        keyServer.answer(200);
        clock.advance(Duration.ofMillis(MAX_MS));
        assertTrue(refresher().runOnce());
        assertTrue(authorizer.isReady(), "ready again after a good fetch");
    }

    @Test
    void aFloodOfUnknownKidsCausesOneEarlyRefreshPerFloor() {
        keyServer.serve(List.of(jwk(Family.ES256.keys.get().getPublic(), "k1")));
        authorizer(5_000);
        refresher().runOnce();
        KeyPair attacker = Family.ES256.keys.get();
        clock.advance(Duration.ofMillis(MIN_MS));
        int fetches = 0;
        for (int i = 0; i < 1_000; i++) {
            assertEquals(AuthDecision.UNAUTHENTICATED, check(token(attacker, Family.ES256, UUID.randomUUID().toString())));
            if (refresher().runOnce()) {
                fetches++;
            }
        }
        assertEquals(1, fetches, "one early refresh for the whole flood");
        clock.advance(Duration.ofMillis(MIN_MS / 2));
        for (int i = 0; i < 100; i++) {
            check(token(attacker, Family.ES256, UUID.randomUUID().toString()));
            assertFalse(refresher().runOnce(), "none before the floor has passed again");
        }
        assertEquals(2, keyServer.requests(), "the key server saw the start fetch and one early refresh");
        assertTrue(authorizer.metricsText().contains("iqstream_jwks_early_refreshes_total 1\n"));
        assertTrue(authorizer.metricsText().contains("iqstream_jwks_unknown_kid_total 1100\n"));
    }

    @Test
    void keyWhoseAlgDoesNotMatchItsTypeIsIgnoredAndTheOthersServe() {
        KeyPair ec = Family.ES256.keys.get();
        KeyPair good = Family.ES256.keys.get();
        String mismatched = Jwks.json(Jwks.builder().key((java.security.interfaces.ECPublicKey) ec.getPublic())
                .id("bad").build()).replace("\"kid\":\"bad\"", "\"kid\":\"bad\",\"alg\":\"RS256\"");
        assertTrue(mismatched.contains("RS256"), mismatched);
        keyServer.serveText("{\"keys\":[" + mismatched + "," + Jwks.json(jwk(good.getPublic(), "good")) + "]}");
        authorizer(5_000);
        refresher().runOnce();
        assertTrue(authorizer.isReady());
        assertTrue(authorizer.metricsText().contains("iqstream_jwks_keys 1\n"), authorizer.metricsText());
        assertEquals(AuthDecision.ALLOWED, check(token(good, Family.ES256, "good")));
        assertEquals(AuthDecision.UNAUTHENTICATED, check(token(ec, Family.ES256, "bad")));
        JwksFile.Lenient parsed = JwksFile.parseLenient("{\"keys\":[" + mismatched + "]}", "test");
        assertTrue(parsed.keys().isEmpty());
        assertTrue(parsed.skipped().get(0).contains("RS256"), parsed.skipped().toString());
    }
}
