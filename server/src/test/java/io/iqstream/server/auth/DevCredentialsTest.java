package io.iqstream.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** Development mode: a random secret with a publisher (runs and threads) and a subscriber token. */
class DevCredentialsTest {

    private final DevCredentials dev = DevCredentials.generate();

    @Test
    void secretIsLongRandomUrlSafeText() {
        assertTrue(dev.secret().getBytes(StandardCharsets.UTF_8).length >= 64, dev.secret());
        assertTrue(dev.secret().matches("[A-Za-z0-9_-]+"), dev.secret());
        assertNotEquals(dev.secret(), DevCredentials.generate().secret());
    }

    @Test
    void publisherTokenPublishesAndSubscribesOnEveryRun() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(dev.secret()));
        for (String runId : new String[] {"run-1", "thread-7:x", "a"}) {
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(dev.publisherToken(), runId, Right.PUBLISH));
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(dev.publisherToken(), runId, Right.SUBSCRIBE));
            assertEquals(AuthDecision.ALLOWED, authorizer.authorizeAny(dev.publisherToken(), runId));
        }
    }

    @Test
    void publisherTokenListsEveryThreadsRuns() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(dev.secret()));
        for (String threadId : new String[] {"thread-7", "ck-thread", "a b/c"}) {
            assertEquals(AuthDecision.ALLOWED, authorizer.authorize(dev.publisherToken(), threadId, Right.THREADS));
        }
    }

    @Test
    void subscriberTokenSubscribesButDoesNotPublish() {
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(dev.secret()));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorize(dev.subscriberToken(), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.ALLOWED, authorizer.authorizeAny(dev.subscriberToken(), "run-1"));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(dev.subscriberToken(), "run-1", Right.PUBLISH));
        assertEquals(AuthDecision.FORBIDDEN, authorizer.authorize(dev.subscriberToken(), "thread-7", Right.THREADS));
    }

    @Test
    void tokensAreValidForADayOnly() {
        Instant issued = Instant.now();
        Authorizer dayLater = Authorizer.create(AuthSettings.hmac(dev.secret()),
                Clock.fixed(issued.plus(Duration.ofHours(24)).minusSeconds(60), ZoneOffset.UTC));
        Authorizer tooLate = Authorizer.create(AuthSettings.hmac(dev.secret()),
                Clock.fixed(issued.plus(Duration.ofHours(24)).plus(AuthSettings.DEFAULT_CLOCK_SKEW).plusSeconds(5), ZoneOffset.UTC));
        assertEquals(AuthDecision.ALLOWED, dayLater.authorize(dev.subscriberToken(), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, tooLate.authorize(dev.subscriberToken(), "run-1", Right.SUBSCRIBE));
        assertEquals(AuthDecision.UNAUTHENTICATED, tooLate.authorize(dev.publisherToken(), "run-1", Right.PUBLISH));
    }

    @Test
    void tokensDoNotVerifyUnderAnotherSecret() {
        Authorizer other = Authorizer.create(AuthSettings.hmac(DevCredentials.generate().secret()));
        assertEquals(AuthDecision.UNAUTHENTICATED, other.authorize(dev.publisherToken(), "run-1", Right.PUBLISH));
    }
}
