package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.iqstream.server.testing.TestServer;
import org.junit.jupiter.api.Test;

/**
 * One request body is at most {@code --max-event-bytes} (DURABLE-STREAMS.md, Limits): an append or a create's first
 * append one byte over it is {@code 413} and stores nothing; one of exactly that size is taken.
 */
class DurableStreamBodyLimitTest {
    private static final String TYPE = "Content-Type";

    @Test
    void aBodyOverMaxEventBytesIs413AndStoresNothing() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true", "--max-event-bytes", "1024")) {
            String url = server.base() + "/v1/stream/limits/body";
            String over = "x".repeat(1025);
            assertEquals(413, send("PUT", url, over, TYPE, "text/plain").statusCode(), "a create's first append");
            assertEquals(404, send("HEAD", url, null).statusCode(), "not created");
            assertEquals(201, send("PUT", url, null, TYPE, "text/plain").statusCode());
            assertEquals(413, send("POST", url, over, TYPE, "text/plain").statusCode(), "an append");
            String full = "y".repeat(1024);
            assertEquals(204, send("POST", url, full, TYPE, "text/plain").statusCode(), "exactly the limit");
            assertEquals(full, send("GET", url + "?offset=-1", null).body(), "only the append within the limit");
        }
    }
}
