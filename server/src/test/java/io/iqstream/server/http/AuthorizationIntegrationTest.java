package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** 401 vs 403 vs 404 over real HTTP, for every place a token can come from. */
class AuthorizationIntegrationTest {
    static TestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServer.start("--await-run", "0ms");
        Http.publish(server.base(), "thread-7:run-1", Tokens.admin(), "{\"type\":\"RUN_STARTED\"}",
                "{\"type\":\"RUN_FINISHED\"}");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static int subscribe(String path, String... headers) throws Exception {
        try (SseClient c = SseClient.open(server.port(), path, headers)) {
            return c.status();
        }
    }

    @Test
    void noTokenIs401() throws Exception {
        assertEquals(401, subscribe("/v1/runs/thread-7:run-1/events"));
        HttpResponse<String> r = Http.post(server.base() + "/v1/runs/x/events", "application/x-ndjson",
                "{\"type\":\"A\"}\n");
        assertEquals(401, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"unauthenticated\""), r.body());
        assertEquals("Bearer realm=\"iqstream\"", r.headers().firstValue("WWW-Authenticate").orElse(""));
    }

    @Test
    void badTokensOfEachKindAre401() throws Exception {
        String good = Tokens.subscriber("*");
        String[] parts = good.split("\\.");
        String wrongKey = new TokenMinter("another-secret-0123456789-abcdefghijklmnop")
                .mint(List.of(), List.of("*"), Duration.ofHours(1));
        String expired = io.jsonwebtoken.Jwts.builder()
                .claim("iqstream", java.util.Map.of("subscribe", List.of("*")))
                .expiration(new java.util.Date(System.currentTimeMillis() - 300_000))
                .signWith(io.jsonwebtoken.security.Keys.hmacShaKeyFor(TestServer.SECRET.getBytes(StandardCharsets.UTF_8)))
                .compact();
        String unsigned = Base64.getUrlEncoder().withoutPadding()
                .encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + ".";
        String tampered = parts[0] + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(
                "{\"iqstream\":{\"subscribe\":[\"*\"],\"publish\":[\"*\"]}}".getBytes(StandardCharsets.UTF_8))
                + "." + parts[2];
        for (String bad : new String[] {"garbage", wrongKey, expired, unsigned, tampered, parts[0] + "." + parts[1]}) {
            assertEquals(401, subscribe("/v1/runs/thread-7:run-1/events", "Authorization: Bearer " + bad), bad);
        }
        assertEquals(200, subscribe("/v1/runs/thread-7:run-1/events", "Authorization: Bearer " + good));
    }

    @Test
    void validTokenWithoutTheRightIs403() throws Exception {
        String other = Tokens.subscriber("thread-8:*");
        assertEquals(403, subscribe("/v1/runs/thread-7:run-1/events", "Authorization: Bearer " + other));
        String reader = Tokens.subscriber("thread-7:*");
        assertEquals(200, subscribe("/v1/runs/thread-7:run-1/events", "Authorization: Bearer " + reader));
        HttpResponse<String> publish = Http.publish(server.base(), "thread-7:run-2", reader, "{\"type\":\"A\"}");
        assertEquals(403, publish.statusCode(), "a subscribe right does not allow publishing");
        assertTrue(publish.body().contains("\"error\":\"forbidden\""));
    }

    @Test
    void forbiddenComesBeforeNotFoundSoRunIdsCannotBeProbed() throws Exception {
        String other = Tokens.subscriber("mine-*");
        assertEquals(403, subscribe("/v1/runs/does-not-exist/events", "Authorization: Bearer " + other));
        assertEquals(403, Http.get(server.base() + "/v1/runs/does-not-exist", "Authorization", "Bearer " + other)
                .statusCode());
        assertEquals(404, Http.get(server.base() + "/v1/runs/mine-404", "Authorization", "Bearer " + other)
                .statusCode());
    }

    @Test
    void tokenFromQueryOrCookieWorksForBrowsers() throws Exception {
        String reader = Tokens.subscriber("thread-7:run-1");
        assertEquals(200, subscribe("/v1/runs/thread-7:run-1/events?access_token=" + reader));
        assertEquals(200, subscribe("/v1/runs/thread-7:run-1/events", "Cookie: a=b; iqstream_token=" + reader));
        assertEquals(403, subscribe("/v1/runs/thread-7:run-9/events?access_token=" + reader));
    }
}
