package io.iqstream.server.http;

import static io.iqstream.server.testing.DurableHttp.bearer;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Durable Streams under JWT, over real HTTP: a token's publish patterns allow PUT, POST and DELETE, its subscribe
 * patterns GET and HEAD, both matched against the stream's path after {@code /v1/stream/}; no token is 401, a
 * token without the right is 403; {@code ?access_token=} works as for runs. With --durable-streams-open no token
 * is needed.
 */
class DurableStreamAuthorizationTest {
    static TestServer server;
    static TestServer open;

    @BeforeAll
    static void start() {
        server = TestServer.start();
        open = TestServer.start("--durable-streams-open", "true");
    }

    @AfterAll
    static void stop() {
        server.close();
        open.close();
    }

    @Test
    void noTokenIs401ForEveryMethod() throws Exception {
        String url = server.base() + "/v1/stream/chat/no-token";
        for (String method : new String[] {"PUT", "POST", "GET", "HEAD", "DELETE"}) {
            HttpResponse<String> r = send(method, url, null);
            assertEquals(401, r.statusCode(), method);
            assertEquals("Bearer realm=\"iqstream\"", r.headers().firstValue("WWW-Authenticate").orElse(""));
        }
    }

    @Test
    void patternsMatchTheStreamsPath() throws Exception {
        String writer = Tokens.publisher("chat/*");
        String reader = Tokens.subscriber("chat/*");
        String url = server.base() + "/v1/stream/chat/a";
        assertEquals(201, send("PUT", url, "hello", bearer(writer, "Content-Type", "text/plain")).statusCode());
        assertEquals(204, send("POST", url, " world", bearer(writer, "Content-Type", "text/plain")).statusCode());
        HttpResponse<String> read = send("GET", url + "?offset=-1", null, bearer(reader));
        assertEquals(200, read.statusCode());
        assertEquals("hello world", read.body());
        assertEquals(200, send("HEAD", url, null, bearer(reader)).statusCode());
        // the reader may not write, the writer may not read
        assertEquals(403, send("POST", url, "x", bearer(reader, "Content-Type", "text/plain")).statusCode());
        HttpResponse<String> forbidden = send("GET", url + "?offset=-1", null, bearer(writer));
        assertEquals(403, forbidden.statusCode());
        assertTrue(forbidden.body().contains("stream chat/a"), forbidden.body());
        // another path is not granted
        assertEquals(403, send("PUT", server.base() + "/v1/stream/other/a", "x",
                bearer(writer, "Content-Type", "text/plain")).statusCode());
        // the query token, as EventSource-style clients send it
        assertEquals(200, send("GET", url + "?offset=-1&access_token=" + reader, null).statusCode());
        assertEquals(204, send("DELETE", url, null, bearer(writer)).statusCode());
        assertEquals(404, send("HEAD", url, null, bearer(reader)).statusCode());
    }

    @Test
    void openServesWithoutToken() throws Exception {
        String url = open.base() + "/v1/stream/open/a";
        assertEquals(201, send("PUT", url, "x", "Content-Type", "text/plain").statusCode());
        HttpResponse<String> read = send("GET", url + "?offset=-1", null);
        assertEquals(200, read.statusCode());
        assertEquals("x", read.body());
        assertEquals("*", read.headers().firstValue("Access-Control-Allow-Origin").orElse(""));
        // runs still need their token
        assertEquals(401, send("GET", open.base() + "/v1/runs/r/events", null).statusCode());
    }
}
