package io.iqstream.server.auth;

import static io.iqstream.server.auth.TokenFixtures.jwk;
import static io.iqstream.server.auth.TokenFixtures.rights;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.security.Jwks;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A {@code --jwks} URL is checked once (https, or http only on loopback); a redirect it answers names a hop that
 * was never checked, so it is not followed. The key server here is a real loopback HTTP server that answers
 * {@code 302} to another loopback server (standing in for "any host"): the server must never ask that one, and
 * must never trust the keys it serves, at start or on a refresh.
 */
class JwksRedirectTest {
    private TestServer server;
    private HttpServer redirector;
    private JwksServer elsewhere;

    /** What the redirector answers: a JWK Set (200) while {@link #redirectTo} is null, else 302 there. */
    private final AtomicReference<String> honestSet = new AtomicReference<>("{\"keys\":[]}");
    private final AtomicReference<URI> redirectTo = new AtomicReference<>();
    private final AtomicInteger redirectorRequests = new AtomicInteger();

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (redirector != null) {
            redirector.stop(0);
        }
        if (elsewhere != null) {
            elsewhere.close();
        }
    }

    private URI startRedirector() throws IOException {
        redirector = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        redirector.createContext("/jwks.json", this::answer);
        redirector.start();
        return URI.create("http://127.0.0.1:" + redirector.getAddress().getPort() + "/jwks.json");
    }

    private void answer(HttpExchange exchange) throws IOException {
        redirectorRequests.incrementAndGet();
        try (exchange) {
            URI target = redirectTo.get();
            if (target != null) {
                exchange.getResponseHeaders().set("Location", target.toString());
                exchange.sendResponseHeaders(302, -1);
                return;
            }
            byte[] body = honestSet.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/jwk-set+json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static String token(KeyPair pair, String kid) {
        return TokenFixtures.sign(pair.getPrivate(), Jwts.SIG.ES256, kid, Instant.now(), rights(List.of(), List.of("*")));
    }

    private int status(String token) throws Exception {
        return Http.get(server.base() + "/v1/runs/jwks-run", "Authorization", "Bearer " + token).statusCode();
    }

    private long metric(String line) throws Exception {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(line) + " ([0-9.]+)$")
                .matcher(Http.get(server.base() + "/metrics").body());
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }

    @Test
    void aRedirectAtStartIsNotFollowedAndTheStartFailsNamingIt() throws Exception {
        elsewhere = JwksServer.http();
        KeyPair attacker = TokenFixtures.ec("secp256r1");
        elsewhere.serve(List.of(jwk(attacker.getPublic(), "evil")));
        URI url = startRedirector();
        redirectTo.set(elsewhere.uri());

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> server = TestServer.start(
                "--jwks", url.toString(), "--jwks-timeout", "2s"),
                "a --jwks URL that redirects must not give the server a key set");
        assertTrue(e.getMessage().contains("redirect") && e.getMessage().contains("302"), e.getMessage());
        assertTrue(redirectorRequests.get() >= 1, "the --jwks URL itself was asked");
        assertEquals(0, elsewhere.requests(), "the redirect's target was never contacted");
    }

    @Test
    void aRedirectOnARefreshIsNotFollowedAndTheSetInUseStays() throws Exception {
        elsewhere = JwksServer.http();
        KeyPair honest = TokenFixtures.ec("secp256r1");
        KeyPair attacker = TokenFixtures.ec("secp256r1");
        elsewhere.serve(List.of(jwk(attacker.getPublic(), "evil")));
        honestSet.set("{\"keys\":[" + Jwks.json(jwk(honest.getPublic(), "k1")) + "]}");
        URI url = startRedirector();
        server = TestServer.start("--jwks", url.toString(), "--await-run", "0ms",
                "--jwks-refresh-min", "1s", "--jwks-refresh-max", "1s", "--jwks-max-age", "1h");
        assertEquals(404, status(token(honest, "k1")), "the honest key is in use");

        redirectTo.set(elsewhere.uri());
        int before = redirectorRequests.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (redirectorRequests.get() < before + 2) {
            assertTrue(System.nanoTime() < deadline, "two refreshes after the key server began to redirect");
            Thread.sleep(50);
        }
        assertEquals(0, elsewhere.requests(), "the redirect's target was never contacted");
        assertEquals(401, status(token(attacker, "evil")), "keys behind a redirect are never trusted");
        assertEquals(404, status(token(honest, "k1")), "the last good set stays in use");
        assertTrue(metric("iqstream_jwks_refresh_failures_total{reason=\"redirect\"}") >= 1,
                "the refused redirect is counted by its own reason");
    }
}
