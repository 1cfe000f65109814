package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@code Stream-Seq} must increase per stream (byte-wise): a regression or a repeat is {@code 409} whose message
 * begins "Sequence conflict: " (the reference server's words, which the protocol's client conformance suite looks
 * for), then says which seq came after which; nothing is appended.
 */
class StreamSeqTest {
    private static final String TYPE = "Content-Type";

    @Test
    void aSeqThatDoesNotIncreaseIsASequenceConflictAndAppendsNothing() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            String url = server.base() + "/v1/stream/seq/a";
            assertEquals(201, send("PUT", url, null, TYPE, "text/plain").statusCode());
            assertEquals(204, send("POST", url, "one", TYPE, "text/plain", "Stream-Seq", "2").statusCode());
            for (String seq : new String[] {"1", "2", "10"}) { // "10" is before "2" byte-wise
                HttpResponse<String> r = send("POST", url, "x", TYPE, "text/plain", "Stream-Seq", seq);
                assertEquals(409, r.statusCode(), seq + ": " + r.body());
                assertEquals("Sequence conflict: Stream-Seq " + seq + " is not after 2", r.body());
            }
            assertEquals(204, send("POST", url, "two", TYPE, "text/plain", "Stream-Seq", "3").statusCode());
            assertEquals("onetwo", send("GET", url + "?offset=-1", null).body(), "the refused appends left nothing");
            String other = server.base() + "/v1/stream/seq/b";
            assertEquals(201, send("PUT", other, null, TYPE, "text/plain").statusCode());
            HttpResponse<String> fresh = send("POST", other, "b", TYPE, "text/plain", "Stream-Seq", "1");
            assertTrue(fresh.statusCode() == 204, "scoped per stream: " + fresh.body());
        }
    }
}
