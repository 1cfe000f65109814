package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * CORS over raw HTTP against real servers: with {@code --cors-origin '*'} no response ever allows credentials
 * and the {@code iqstream_token} cookie is honoured only for requests without an Origin or from an origin
 * listed by name, so a foreign page cannot read a stream with a victim's cookie.
 */
class CorsIntegrationTest {
    private static final String RUN = "cors-run-1";
    private static final String APP = "https://app.example";
    private static final String EVIL = "https://evil.example";

    static TestServer star;
    static TestServer listed;
    static TestServer mixed;

    @BeforeAll
    static void start() throws Exception {
        star = TestServer.start("--cors-origin", "*", "--await-run", "0ms");
        listed = TestServer.start("--cors-origin", APP, "--await-run", "0ms");
        mixed = TestServer.start("--cors-origin", APP + ",*", "--await-run", "0ms");
        for (TestServer s : new TestServer[] {star, listed, mixed}) {
            assertEquals(200, Http.publish(s.base(), RUN, Tokens.admin(), "{\"type\":\"RUN_STARTED\"}",
                    "{\"type\":\"RUN_FINISHED\"}").statusCode());
        }
    }

    @AfterAll
    static void stop() {
        star.close();
        listed.close();
        mixed.close();
    }

    private static SseClient subscribe(TestServer s, String... headers) throws IOException {
        return SseClient.open(s.port(), "/v1/runs/" + RUN + "/events", headers);
    }

    private static String cookie() {
        return "Cookie: iqstream_token=" + Tokens.subscriber(RUN);
    }

    @Test
    void foreignOriginWithOnlyACookieIsRefusedAsIfNoToken() throws Exception {
        for (TestServer s : new TestServer[] {star, listed, mixed}) {
            try (SseClient c = subscribe(s, "Origin: " + EVIL, cookie())) {
                assertEquals(401, c.status(), "a foreign page must not ride the victim's cookie");
                assertTrue(c.body().contains("\"error\":\"unauthenticated\""), c.body());
                assertNull(c.header("Access-Control-Allow-Credentials"));
            }
        }
        try (SseClient c = subscribe(star, "Origin: null", cookie())) {
            assertEquals(401, c.status(), "a sandboxed frame's opaque origin is foreign too");
        }
    }

    @Test
    void starNeverSendsCredentials() throws Exception {
        try (SseClient c = subscribe(star, "Origin: " + EVIL, "Authorization: Bearer " + Tokens.subscriber(RUN))) {
            assertEquals(200, c.status(), "a bearer token works from any origin");
            assertEquals("*", c.header("Access-Control-Allow-Origin"));
            assertNull(c.header("Access-Control-Allow-Credentials"));
        }
        try (SseClient c = subscribe(star, "Origin: " + EVIL)) {
            assertEquals(401, c.status());
            assertEquals("*", c.header("Access-Control-Allow-Origin"));
            assertNull(c.header("Access-Control-Allow-Credentials"));
        }
        String preflight = raw(star, "OPTIONS /v1/runs/" + RUN + "/events HTTP/1.1\r\nHost: x\r\nOrigin: " + EVIL
                + "\r\nAccess-Control-Request-Method: GET\r\nConnection: close\r\n\r\n");
        assertTrue(preflight.startsWith("HTTP/1.1 204"), preflight);
        assertTrue(preflight.contains("access-control-allow-origin: *\r\n"), preflight);
        assertTrue(!preflight.contains("access-control-allow-credentials"), preflight);
        try (SseClient c = subscribe(mixed, "Origin: " + EVIL, "Authorization: Bearer " + Tokens.subscriber(RUN))) {
            assertEquals(200, c.status());
            assertEquals("*", c.header("Access-Control-Allow-Origin"), "an origin not named gets the wildcard");
            assertNull(c.header("Access-Control-Allow-Credentials"));
        }
    }

    @Test
    void listedOriginKeepsCookieAndCredentials() throws Exception {
        for (TestServer s : new TestServer[] {listed, mixed}) {
            try (SseClient c = subscribe(s, "Origin: " + APP, cookie())) {
                assertEquals(200, c.status(), "a named origin may use the cookie");
                assertEquals(APP, c.header("Access-Control-Allow-Origin"));
                assertEquals("true", c.header("Access-Control-Allow-Credentials"));
                assertTrue(c.header("Vary").toLowerCase(java.util.Locale.ROOT).contains("origin"), c.header("Vary"));
            }
        }
        try (SseClient c = subscribe(listed, "Origin: " + EVIL, "Authorization: Bearer " + Tokens.subscriber(RUN))) {
            assertEquals(200, c.status(), "CORS is the browser's business; a bearer token still authorizes");
            assertNull(c.header("Access-Control-Allow-Origin"), "an origin not listed gets no CORS headers");
        }
    }

    @Test
    void cookieWithoutOriginStillWorks() throws Exception {
        for (TestServer s : new TestServer[] {star, listed}) {
            try (SseClient c = subscribe(s, cookie())) {
                assertEquals(200, c.status(), "same-origin GETs and non-browser clients send no Origin");
                assertNull(c.header("Access-Control-Allow-Origin"));
            }
        }
    }

    /** Sends {@code request} on a new socket and returns everything read until the server closes. */
    private static String raw(TestServer s, String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", s.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1).toLowerCase(java.util.Locale.ROOT)
                    .replaceFirst("^http/1.1", "HTTP/1.1");
        }
    }
}
