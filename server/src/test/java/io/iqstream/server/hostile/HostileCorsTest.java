package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.iqstream.server.testing.Tokens;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 8, item 5: with {@code --cors-origin '*'} a foreign page must not read a stream with the victim's
 * {@code iqstream_token} cookie. The wildcard answers {@code Access-Control-Allow-Origin: *} and never
 * {@code Access-Control-Allow-Credentials}; a cookie token counts only when the request has no Origin or one
 * listed explicitly. Header tokens from any origin still work (that is what {@code *} is for).
 */
class HostileCorsTest {
    private static final String EVIL = "Origin: https://evil.example";
    private static HostileServer server;
    private static String run;
    private final String token = Tokens.admin();

    @BeforeAll
    static void start() throws Exception {
        server = HostileServer.start("--cors-origin", "*");
        run = "cors-" + System.nanoTime();
        RawHttp.Response r = RawHttp.exchange(server.port(), RawHttp.publish(run, "application/x-ndjson", Tokens.admin(),
                "{\"type\":\"RUN_STARTED\"}\n{\"type\":\"RUN_FINISHED\"}\n".getBytes(StandardCharsets.UTF_8)), 10_000);
        assertEquals(200, r.status(), r.toString());
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void wildcardOriginIsAnsweredStarWithoutCredentials() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            RawHttp.Response r = RawHttp.get(server.port(), "/v1/runs/" + run + "/events", EVIL,
                    "Authorization: Bearer " + token);
            assertEquals(200, r.status(), r.toString());
            assertEquals("*", r.header("Access-Control-Allow-Origin"), r.toString());
            assertNull(r.header("Access-Control-Allow-Credentials"), r.toString());
            RawHttp.Response pre = RawHttp.exchange(server.port(), "OPTIONS /v1/runs/" + run + "/events HTTP/1.1\r\n"
                    + "Host: 127.0.0.1\r\n" + EVIL + "\r\nAccess-Control-Request-Method: GET\r\n"
                    + "Access-Control-Request-Headers: Last-Event-ID\r\nConnection: close\r\n\r\n", 10_000);
            assertEquals(204, pre.status(), pre.toString());
            assertEquals("*", pre.header("Access-Control-Allow-Origin"), pre.toString());
            assertNull(pre.header("Access-Control-Allow-Credentials"), pre.toString());
            w.assertSurvived();
        }
    }

    @Test
    void cookieTokenIsIgnoredForAnOriginNotListed() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            RawHttp.Response foreign = RawHttp.get(server.port(), "/v1/runs/" + run + "/events", EVIL,
                    "Cookie: iqstream_token=" + token);
            assertEquals(401, foreign.status(), "a foreign page with the victim's cookie: " + foreign);
            assertNull(foreign.header("Access-Control-Allow-Credentials"), foreign.toString());
            w.assertSurvived();
        }
    }

    @Test
    void cookieTokenStillWorksWithoutAnOrigin() throws Exception {
        try (AttackWindow w = AttackWindow.open(server)) {
            RawHttp.Response same = RawHttp.get(server.port(), "/v1/runs/" + run + "/events",
                    "Cookie: iqstream_token=" + token);
            assertEquals(200, same.status(), "a same-origin request (no Origin) with the cookie: " + same);
            w.assertSurvived();
        }
    }
}
