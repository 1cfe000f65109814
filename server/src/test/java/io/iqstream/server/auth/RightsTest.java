package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The iqstream claim's patterns, and 401 versus 403. */
class RightsTest {

    private final Authorizer authorizer = Authorizer.create(AuthSettings.hmac(TokenFixtures.SECRET_64));
    private final Instant now = Instant.now();

    private String token(Object claim) {
        return TokenFixtures.hmacToken(TokenFixtures.SECRET_64, now, claim);
    }

    @Test
    void exactPatternGrantsOnlyThatRun() {
        String t = token(rights(List.of(), List.of("run-42")));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "run-42", Right.SUBSCRIBE));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run-4", Right.SUBSCRIBE));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run-420", Right.SUBSCRIBE));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "RUN-42", Right.SUBSCRIBE));
    }

    @Test
    void prefixPatternGrantsRunsStartingWithIt() {
        String t = token(rights(List.of("thread-7:*"), List.of()));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "thread-7:run-1", Right.PUBLISH));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, "thread-7:", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "thread-70:run-1", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "thread-7", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "x-thread-7:run-1", Right.PUBLISH));
    }

    @Test
    void starGrantsEveryRun() {
        String t = token(rights(List.of("*"), List.of()));
        for (String runId : List.of("a", "run-1", "thread-7:x", "~.:-")) {
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, runId, Right.PUBLISH));
            assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, runId, Right.SUBSCRIBE), "publish does not imply subscribe");
        }
    }

    @Test
    void severalPatternsAreAlternatives() {
        String t = token(rights(List.of(), List.of("a", "b*", "c")));
        for (String runId : List.of("a", "b", "bee", "c")) {
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(t, runId, Right.SUBSCRIBE), runId);
        }
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "d", Right.SUBSCRIBE));
    }

    @Test
    void starInsideAPatternIsLiteralAndMatchesNoRunId() {
        String t = token(rights(List.of("run*1", ""), List.of()));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run-1", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run1", Right.PUBLISH));
    }

    @Test
    void validTokenWithoutTheClaimIsForbiddenNotUnauthenticated() {
        String t = token(null);
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run-1", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorizeAny(t, "run-1"));
    }

    @Test
    void malformedClaimGrantsNothing() {
        Map<String, Object> numberInList = new LinkedHashMap<>();
        numberInList.put("publish", Arrays.asList("run-1", 7));
        numberInList.put("subscribe", List.of("run-1"));
        Map<String, Object> bareString = Map.of("publish", "*");
        Map<String, Object> nestedList = Map.of("publish", List.of(List.of("*")));
        Map<String, Object> nullInList = Map.of("publish", Arrays.asList((Object) null));
        for (Object claim : List.of("*", List.of("*"), 42, true, Map.of(), bareString, nestedList, nullInList, numberInList)) {
            String t = token(claim);
            assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(t, "run-1", Right.PUBLISH), String.valueOf(claim));
        }
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(token(numberInList), "run-1", Right.SUBSCRIBE),
                "a malformed publish list leaves the well-formed subscribe list alone");
    }

    @Test
    void claimKeysAreCaseSensitive() {
        String t = token(Map.of("Publish", List.of("*"), "SUBSCRIBE", List.of("*")));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorizeAny(t, "run-1"));
    }

    @Test
    void authorizeAnyAcceptsEitherRight() {
        String publisher = token(rights(List.of("run-1"), List.of()));
        String subscriber = token(rights(List.of(), List.of("run-1")));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorizeAny(publisher, "run-1"));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorizeAny(subscriber, "run-1"));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorizeAny(publisher, "run-2"));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorizeAny(null, "run-1"));
        assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorizeAny("garbage", "run-1"));
    }

    @Test
    void missingOrBadTokenIsUnauthenticatedWhateverTheRun() {
        String otherSecret = TokenFixtures.hmacToken("another-secret-of-at-least-32-bytes!!", now, rights(List.of("*"), List.of("*")));
        for (String t : new String[] {null, "", otherSecret}) {
            assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(t, "run-1", Right.PUBLISH));
            assertEquals(AuthDecision.UNAUTHENTICATED, authorizer.authorize(t, "run-1", Right.SUBSCRIBE));
        }
    }

    @Test
    void disabledAuthAllowsEverything() {
        Authorizer off = Authorizer.create(AuthSettings.disabled());
        assertFalse(off.enabled());
        assertEquals(AuthDecision.ALLOWED, off.authorize(null, "run-1", Right.PUBLISH));
        assertEquals(AuthDecision.ALLOWED, off.authorize("garbage", "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.ALLOWED, off.authorizeAny(null, "run-1"));
        assertTrue(off.describe().contains("disabled"), off.describe());
    }

    @Test
    void patternMatchingDoesNotAllocate() {
        RunPatterns patterns = RunPatterns.fromClaimValue(List.of("a", "b", "thread-7:*", "run-9"));
        Allocation.assertNoAllocation(() -> {
            boolean all = true;
            for (int i = 0; i < 10_000; i++) {
                all &= patterns.matches("thread-7:x") & !patterns.matches("thread-8:x") & patterns.matches("run-9");
            }
            assertTrue(all);
        });
    }
}
