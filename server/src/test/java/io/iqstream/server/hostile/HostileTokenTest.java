package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.jackson.io.JacksonSerializer;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.List;
import java.util.Map;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Issue 8, item 14: a token without {@code exp} would never expire, so it is refused unless the operator says
 * {@code --allow-tokens-without-exp}; and ended run ids are not silently reusable once their tombstones are
 * forgotten: tombstones are either charged to the memory budget or their eviction is counted in /metrics
 * ({@code iqstream_tombstones_evicted_total}), and while kept a deleted id answers 410 and refuses a new publish.
 */
class HostileTokenTest {
    private static final int CHURN = 500;

    @Test
    void tokenWithoutExpIsRefused401SayingExpIsRequired() throws Exception {
        try (HostileServer server = HostileServer.start("--await-run", "1s"); AttackWindow w = AttackWindow.open(server)) {
            String forever = tokenWithoutExp();
            RawHttp.Response sub = RawHttp.get(server.port(), "/v1/runs/any/events", "Authorization: Bearer " + forever);
            assertEquals(401, sub.status(), "subscribe with a token without exp: " + sub);
            assertTrue(sub.text().contains("exp"), "the message says exp is required: " + sub);
            RawHttp.Response pub = RawHttp.exchange(server.port(), RawHttp.publish("no-exp", "application/x-ndjson",
                    forever, "{\"type\":\"RUN_STARTED\"}\n".getBytes(StandardCharsets.UTF_8)), 10_000);
            assertEquals(401, pub.status(), "publish with a token without exp: " + pub);
            w.assertSurvived();
        }
    }

    @Test
    void tokenWithoutExpIsAcceptedOnlyWithAllowTokensWithoutExp() throws Exception {
        try (HostileServer server = HostileServer.start("--allow-tokens-without-exp");
                AttackWindow w = AttackWindow.open(server)) {
            RawHttp.Response pub = RawHttp.exchange(server.port(), RawHttp.publish("no-exp", "application/x-ndjson",
                    tokenWithoutExp(), "{\"type\":\"RUN_STARTED\"}\n".getBytes(StandardCharsets.UTF_8)), 10_000);
            assertEquals(200, pub.status(), "publish with a token without exp, allowed: " + pub);
            w.assertSurvived();
        }
    }

    @Test
    void deletedRunIdsStayTombstonedAndEvictionIsAccounted() throws Exception {
        try (HostileServer server = HostileServer.start(); AttackWindow w = AttackWindow.openWithoutRun(server)) {
            String token = Tokens.admin();
            long usedBefore = server.metric("iqstream_memory_used_bytes");
            String last = null;
            for (int i = 0; i < CHURN; i++) {
                last = "churn-" + i;
                // an ended run (DELETE of a running one stops it, and keeps it for --retention)
                RawHttp.Response pub = RawHttp.exchange(server.port(), RawHttp.publish(last, "application/x-ndjson",
                        token, "{\"type\":\"RUN_STARTED\"}\n{\"type\":\"RUN_FINISHED\"}\n"
                                .getBytes(StandardCharsets.UTF_8)), 10_000);
                assertEquals(200, pub.status(), pub.toString());
                RawHttp.Response del = RawHttp.exchange(server.port(), "DELETE /v1/runs/" + last + " HTTP/1.1\r\n"
                        + "Host: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\nConnection: close\r\n\r\n", 10_000);
                assertEquals(204, del.status(), del.toString());
            }
            RawHttp.Response gone = RawHttp.get(server.port(), "/v1/runs/" + last, "Authorization: Bearer " + token);
            assertEquals(410, gone.status(), "a deleted run id answers 410 while its tombstone is kept: " + gone);
            RawHttp.Response reuse = RawHttp.exchange(server.port(), RawHttp.publish(last, "application/x-ndjson", token,
                    "{\"type\":\"RUN_STARTED\"}\n".getBytes(StandardCharsets.UTF_8)), 10_000);
            assertEquals(409, reuse.status(), "a tombstoned id is not silently reused: " + reuse);
            long evicted = server.metric("iqstream_tombstones_evicted_total");
            long usedAfter = server.metric("iqstream_memory_used_bytes");
            assertTrue(evicted >= 0 || usedAfter > usedBefore, "tombstones are neither counted when evicted "
                    + "(no iqstream_tombstones_evicted_total) nor charged to the budget (memory used " + usedBefore
                    + " -> " + usedAfter + " bytes after " + CHURN + " tombstones)");
            w.assertSurvived();
        }
    }

    private static String tokenWithoutExp() {
        return Jwts.builder().json(new JacksonSerializer<Map<String, ?>>())
                .claim("iqstream", Map.of("publish", List.of("*"), "subscribe", List.of("*")))
                .issuedAt(new Date())
                .signWith(new SecretKeySpec(TestServer.SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"),
                        Jwts.SIG.HS256)
                .compact();
    }
}
