package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.DurableHttp;
import io.iqstream.server.testing.TestServer;
import java.net.http.HttpResponse;
import java.util.Iterator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code --sse-lifetime}: an SSE response ends by itself once it has lasted that long, after a control event that
 * gives the offset to go on from; a read resumed from that offset gets what came after it, nothing again.
 */
class SseLifetimeTest {
    private static final Pattern NEXT_OFFSET = Pattern.compile("\"streamNextOffset\":\"([^\"]+)\"");

    @Test
    void anSseResponseEndsAtItsLifetimeAndTheReadResumesFromItsOffset() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true", "--sse-lifetime", "1s",
                "--durable-streams-long-poll", "200ms")) {
            String url = server.base() + "/v1/stream/lifetime/one";
            assertEquals(201, send("PUT", url, null, "Content-Type", "text/plain").statusCode());
            assertEquals(204, send("POST", url, "first", "Content-Type", "text/plain").statusCode());

            // the first response: the message, then control events until the server ends it (the lines run out)
            Session first = readToTheEnd(url + "?offset=-1&live=sse");
            assertEquals("data:first", first.data, "the first response carried the message");
            assertNotNull(first.lastOffset, "a control event gave the offset to resume from");
            assertFalse(first.sawClosed, "the stream is open: the response ended on its lifetime, not a closure");

            // what was written meanwhile is read by a read resumed from that offset, and nothing before it
            assertEquals(204, send("POST", url, "second", "Content-Type", "text/plain").statusCode());
            Session second = readToTheEnd(url + "?offset=" + first.lastOffset + "&live=sse");
            assertEquals("data:second", second.data, "the resumed read got only what came after its offset");
            assertEquals("firstsecond", DurableHttp.readAll(url), "the stream holds both, once each");
        }
    }

    /** What one SSE response carried, read until the server ended it. */
    private record Session(String data, String lastOffset, boolean sawClosed) {}

    private static Session readToTheEnd(String url) throws Exception {
        HttpResponse<Stream<String>> r = DurableHttp.lines(url);
        assertEquals(200, r.statusCode());
        StringBuilder data = new StringBuilder();
        String lastOffset = null;
        boolean closed = false;
        int controls = 0;
        String event = "";
        try (Stream<String> lines = r.body()) {
            Iterator<String> it = lines.iterator();
            while (it.hasNext()) { // ends only when the server ends the response
                String line = it.next();
                if (line.startsWith("event:")) {
                    event = line.substring(6).trim();
                } else if (line.startsWith("data:") && event.equals("data")) {
                    data.append(line);
                } else if (line.startsWith("data:") && event.equals("control")) {
                    controls++;
                    Matcher m = NEXT_OFFSET.matcher(line);
                    if (m.find()) {
                        lastOffset = m.group(1);
                    }
                    closed |= line.contains("streamClosed");
                }
            }
        }
        assertTrue(controls >= 1, "control events came");
        return new Session(data.toString(), lastOffset, closed);
    }
}
