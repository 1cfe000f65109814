package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Verified tokens are cached, bounded, and never served past their expiry. */
class TokenCacheTest {

    private final MutableClock clock = MutableClock.atNow();
    private final Instant now = clock.instant();
    private final Rights someRights = Rights.fromClaim(rights(List.of("*"), List.of()));

    private Authorizer authorizer(int cacheSize) {
        return Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64).withLimits(Duration.ofSeconds(30), cacheSize), clock);
    }

    private String token(String runId) {
        return TokenFixtures.hmacToken(TokenFixtures.SECRET_64, now, rights(List.of(), List.of(runId)));
    }

    @Test
    void cacheHitDoesNotVerifyTheSignatureAgain() {
        Authorizer authorizer = authorizer(100);
        String t = token("run-1");
        for (int i = 0; i < 50; i++) {
            // a fresh String each time, as each request decodes its own
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(new String(t), "run-1", Right.SUBSCRIBE));
            assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(new String(t), "run-2", Right.SUBSCRIBE));
        }
        assertEquals(1, authorizer.verificationCount());
    }

    @Test
    void cachedTokenIsRefusedOnceExpired() {
        Authorizer authorizer = authorizer(100);
        String t = token("run-1"); // exp = now + 1h, skew 30 s
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        clock.advance(Duration.ofMinutes(60).plusSeconds(29));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        assertEquals(1, authorizer.verificationCount());
        clock.advance(Duration.ofSeconds(2));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        assertEquals(3, authorizer.verificationCount(), "an expired entry is a miss, and failures are not cached");
    }

    @Test
    void failedVerificationsAreNotCached() {
        Authorizer authorizer = authorizer(100);
        String forged = TokenFixtures.hmacToken("another-secret-of-at-least-32-bytes!!", now, rights(List.of("*"), List.of("*")));
        for (int i = 0; i < 5; i++) {
            assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(forged, "run-1", Right.PUBLISH));
        }
        assertEquals(5, authorizer.verificationCount());
    }

    @Test
    void zeroCacheSizeVerifiesEveryTime() {
        Authorizer authorizer = authorizer(0);
        String t = token("run-1");
        for (int i = 0; i < 5; i++) {
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        }
        assertEquals(5, authorizer.verificationCount());
        assertTrue(authorizer.describe().contains("no token cache"), authorizer.describe());
    }

    @Test
    void staysWithinItsCapacityAndKeepsAnsweringCorrectly() {
        Authorizer authorizer = authorizer(8);
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            tokens.add(token("run-" + i));
        }
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < tokens.size(); i++) {
                assertEquals(AuthDecision.ALLOWED, authorizer.authorize(tokens.get(i), "run-" + i, Right.SUBSCRIBE));
                assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(tokens.get(i), "run-" + (i + 1), Right.SUBSCRIBE));
            }
        }
        assertTrue(authorizer.verificationCount() > 100, "evicted tokens are verified again");
        TokenCache cache = new TokenCache(8);
        for (int i = 0; i < 100; i++) {
            cache.put("token-" + i, someRights, Long.MAX_VALUE, 0);
        }
        assertTrue(cache.occupiedSlots() <= 8);
        assertNotNull(cache.get("token-99", 0), "the newest entry is in");
    }

    @Test
    void tokensWithTheSameHashDoNotShareEntries() {
        assertEquals("Aa".hashCode(), "BB".hashCode());
        TokenCache cache = new TokenCache(16);
        Rights other = Rights.fromClaim(rights(List.of(), List.of("x")));
        cache.put("Aa", someRights, Long.MAX_VALUE, 0);
        assertNull(cache.get("BB", 0));
        cache.put("BB", other, Long.MAX_VALUE, 0);
        assertSame(someRights, cache.get("Aa", 0), "two-way sets keep both");
        assertSame(other, cache.get("BB", 0));
        cache.put("C#", someRights, Long.MAX_VALUE, 0); // same hash again: evicts one of the two
        assertSame(someRights, cache.get("C#", 0));
        int olderKept = (cache.get("Aa", 0) == null ? 0 : 1) + (cache.get("BB", 0) == null ? 0 : 1);
        assertEquals(1, olderKept, "a set holds two tokens");
    }

    @Test
    void evictsTheEntryThatExpiresFirstAndReusesStaleSlots() {
        assertEquals("Aa".hashCode(), "C#".hashCode());
        TokenCache cache = new TokenCache(16);
        cache.put("Aa", someRights, 1_000, 0);
        cache.put("BB", someRights, 2_000, 0);
        cache.put("C#", someRights, 3_000, 0);
        assertNull(cache.get("Aa", 0));
        assertNotNull(cache.get("BB", 0));
        assertNotNull(cache.get("C#", 0));
        cache.put("Aa", someRights, 9_000, 2_500); // BB is stale at 2 500: its slot is free again
        assertNotNull(cache.get("Aa", 2_500));
        assertNotNull(cache.get("C#", 2_500));
        assertNull(cache.get("BB", 2_500));
        assertNull(cache.get("C#", 3_000), "never served at or after its expiry");
    }

    @Test
    void reinsertingATokenReplacesItsEntry() {
        TokenCache cache = new TokenCache(4);
        cache.put("t", someRights, 1_000, 0);
        cache.put("t", someRights, 5_000, 0);
        assertEquals(1, cache.occupiedSlots());
        assertNotNull(cache.get("t", 4_000));
    }

    @Test
    void cacheHitAllocatesNothing() {
        Authorizer authorizer = authorizer(100);
        String t = token("thread-7:run-1");
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "thread-7:run-1", Right.SUBSCRIBE));
        Allocation.assertNoAllocation(() -> {
            int allowed = 0;
            for (int i = 0; i < 10_000; i++) {
                if (authorizer.authorize(t, "thread-7:run-1", Right.SUBSCRIBE) == AuthDecision.ALLOWED) {
                    allowed++;
                }
            }
            assertEquals(10_000, allowed);
        });
        assertEquals(1, authorizer.verificationCount());
    }

    @Test
    void answersCorrectlyFromManyThreadsAtOnce() throws Exception {
        Authorizer authorizer = authorizer(16);
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            tokens.add(token("run-" + i));
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> wrong = new ArrayList<>();
            for (int thread = 0; thread < 8; thread++) {
                int seed = thread;
                wrong.add(pool.submit(() -> {
                    int errors = 0;
                    for (int n = 0; n < 2_000; n++) {
                        int i = (n * 7 + seed) % tokens.size();
                        if (authorizer.authorize(tokens.get(i), "run-" + i, Right.SUBSCRIBE) != AuthDecision.ALLOWED) {
                            errors++;
                        }
                        if (authorizer.authorize(tokens.get(i), "run-" + (i + 1), Right.SUBSCRIBE) != AuthDecision.FORBIDDEN) {
                            errors++;
                        }
                    }
                    return errors;
                }));
            }
            for (Future<Integer> f : wrong) {
                assertEquals(0, f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
