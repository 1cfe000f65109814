package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * While the server drains (SIGTERM), a durable stream's {@code PUT} is {@code 503 draining} with
 * {@code Retry-After: 1} and creates nothing, while the streams it holds go on: appends are stored and reads
 * answered (DURABLE-STREAMS.md, after the limits table). Over real sockets, with the drain the SIGTERM handler
 * runs.
 */
class DrainingStreamsTest {
    private static final String TYPE = "Content-Type";

    @Test
    void aPutIs503WhileAppendsAndReadsGoOn() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            String held = server.base() + "/v1/stream/draining/held";
            assertEquals(201, send("PUT", held, null, TYPE, "text/plain").statusCode());
            assertEquals(204, send("POST", held, "before ", TYPE, "text/plain").statusCode());
            server.server().drain(5_000);
            assertTrue(server.server().context().isDraining(), "draining");

            String fresh = server.base() + "/v1/stream/draining/fresh";
            HttpResponse<String> put = send("PUT", fresh, null, TYPE, "text/plain");
            assertEquals(503, put.statusCode(), "a new stream while draining: " + put.body());
            assertTrue(put.body().contains("\"error\":\"draining\""), put.body());
            assertEquals("1", put.headers().firstValue("Retry-After").orElse(""), "retried elsewhere");
            assertEquals(404, send("GET", fresh + "?offset=-1", null).statusCode(), "nothing was created");

            HttpResponse<String> append = send("POST", held, "during", TYPE, "text/plain");
            assertEquals(204, append.statusCode(), "an append to a stream it holds goes on: " + append.body());
            HttpResponse<String> read = send("GET", held + "?offset=-1", null);
            assertEquals(200, read.statusCode(), "a read goes on: " + read.body());
            assertEquals("before during", read.body(), "both appends, in order");
        }
    }
}
