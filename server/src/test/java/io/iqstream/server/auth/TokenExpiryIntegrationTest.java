package io.iqstream.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Keys;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A token without {@code exp} over raw HTTP: refused by default, accepted with --allow-tokens-without-exp. */
class TokenExpiryIntegrationTest {
    private static final String RUN = "exp-run-1";

    /** A subscribe token for every run, validly signed with the test secret, with no exp claim. */
    private static String tokenWithoutExp() {
        return Jwts.builder()
                .claim("iqstream", Map.of("subscribe", List.of("*")))
                .issuedAt(new Date())
                .signWith(Keys.hmacShaKeyFor(TestServer.SECRET.getBytes(StandardCharsets.UTF_8)), Jwts.SIG.HS256)
                .compact();
    }

    private static void publishEndedRun(TestServer server) throws Exception {
        assertEquals(200, Http.publish(server.base(), RUN, Tokens.admin(), "{\"type\":\"RUN_STARTED\"}",
                "{\"type\":\"RUN_FINISHED\"}").statusCode());
    }

    @Test
    void tokenWithoutExpIsRefusedWithAMessageSayingExpIsRequired() throws Exception {
        try (TestServer server = TestServer.start("--await-run", "0ms")) {
            publishEndedRun(server);
            try (SseClient c = SseClient.open(server.port(), "/v1/runs/" + RUN + "/events",
                    "Authorization: Bearer " + tokenWithoutExp())) {
                assertEquals(401, c.status());
                assertTrue(c.body().contains("\"error\":\"unauthenticated\""), c.body());
                assertTrue(c.body().contains("exp is required"), c.body());
                assertTrue(c.body().contains("--allow-tokens-without-exp"), c.body());
            }
            try (SseClient c = SseClient.open(server.port(), "/v1/runs/" + RUN + "/events",
                    "Authorization: Bearer " + Tokens.subscriber(RUN))) {
                assertEquals(200, c.status(), "a token with exp is still accepted");
            }
        }
    }

    @Test
    void tokenWithoutExpIsAcceptedWhenAllowed() throws Exception {
        try (TestServer server = TestServer.start("--await-run", "0ms", "--allow-tokens-without-exp", "true")) {
            publishEndedRun(server);
            try (SseClient c = SseClient.open(server.port(), "/v1/runs/" + RUN + "/events",
                    "Authorization: Bearer " + tokenWithoutExp())) {
                assertEquals(200, c.status());
                assertEquals(2, c.take(2, 10_000).size());
            }
        }
    }
}
