package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Credentials in the debug log (issue 31, item 5): the lines that carry request URIs — refused requests, token
 * failures — are debug level, so a server at info never prints them and the "no credential in any log line" scan
 * of the other hostile tests cannot see them. Here the server runs at {@code --log-level debug}; requests carrying
 * credentials every way a client can (a JWT and an opaque value in {@code access_token=}, a JWT as a run id, a
 * bearer token with a bad signature, the {@code iqstream_token} cookie from a page not allowed) are refused; the
 * test first asserts that the refusal and token-failure lines were printed, then that no line holds any of the
 * credentials sent, a JWT, an {@code access_token=} value or the cookie's value.
 */
class HostileDebugLogTest {
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);

    @Test
    void refusalLinesArePrintedAtDebugAndCarryNoCredential() throws Exception {
        String other = MINTER.mint(List.of("other-*"), List.of("other-*"), Duration.ofHours(1));
        String forged = MINTER.mint(List.of("*"), List.of("*"), Duration.ofHours(1));
        forged = forged.substring(0, forged.lastIndexOf('.') + 1) + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        String opaque = "opaque-S3CR3T-4711";
        String cookie = MINTER.mint(List.of("*"), List.of("*"), Duration.ofHours(1));
        List<String> secrets = List.of(other, forged, opaque, cookie, other.substring(other.lastIndexOf('.') + 1),
                forged.substring(forged.lastIndexOf('.') + 1));
        HostileServer server = HostileServer.start("--log-level", "debug", "--await-run", "1s");
        try {
            List<Integer> statuses = new ArrayList<>();
            statuses.add(RawHttp.get(server.port(), "/v1/runs/mine-1/events?access_token=" + other).status());
            statuses.add(RawHttp.get(server.port(), "/v1/runs/mine-1/events?live=true&access_token=" + opaque)
                    .status());
            statuses.add(RawHttp.get(server.port(), "/v1/runs/" + other + "/events").status());
            statuses.add(RawHttp.get(server.port(), "/v1/runs/mine-1?token=" + opaque + "&access_token=" + other,
                    "Authorization: Bearer " + forged).status());
            statuses.add(RawHttp.get(server.port(), "/v1/runs/mine-1/events?x=1",
                    "Cookie: iqstream_token=" + cookie, "Origin: https://evil.example").status());
            statuses.add(RawHttp.get(server.port(), "/nowhere?access_token=" + other).status());
            assertEquals(List.of(403, 401, 400, 401, 401, 404), statuses);
            // the lines this test is about were printed (so the scan below sees them); the server's output is read
            // from its process as it comes, so the last answer's line may arrive just after the answer
            Conditions.await("six refusal lines at debug", 10_000,
                    () -> lines(server).stream().filter(l -> l.contains("refused GET ")).count() >= 6);
            long refusals = lines(server).stream().filter(l -> l.contains("refused GET ")).count();
            assertTrue(refusals >= 6, "refusal lines at debug: " + refusals + "\n" + server.output());
            assertTrue(lines(server).stream().anyMatch(l -> l.contains("token refused")),
                    "a token failure line at debug\n" + server.output());
            assertTrue(lines(server).stream().anyMatch(l -> l.contains("refused GET /v1/runs/mine-1/events?access_token=…")),
                    "the query's token redacted in place\n" + server.output());
        } finally {
            server.close(); // fails if a line holds a JWT or an access_token= value
        }
        for (String line : lines(server)) {
            for (String secret : secrets) {
                assertTrue(!line.contains(secret), "a log line holds a credential: " + line);
            }
        }
    }

    private static List<String> lines(HostileServer server) {
        return List.of(server.output().split("\n"));
    }
}
