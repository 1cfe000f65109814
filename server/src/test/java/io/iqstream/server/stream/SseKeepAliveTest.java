package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A parked SSE reader keeps one timer at a time (the keep-alive tick re-armed each round): an idle SSE read gets a
 * control event every {@code --durable-streams-long-poll} (DURABLE-STREAMS.md, {@code GET ?live=sse}), round after
 * round, over a real socket.
 *
 * <p>"Every interval" is checked against a clock that a busy machine slows as much as the keep-alive: the same
 * server's long-poll timeout, which is the same flag. While the SSE reader sees {@value #ROUNDS} intervals (one
 * control event to the {@value #ROUNDS}th after it), a long-poll reader of another idle stream, asking again as soon
 * as it is answered, sees at most twice as many timeouts (each takes the interval and a round trip, so about as
 * many); a keep-alive sent every other interval or never fails.
 */
class SseKeepAliveTest {
    private static final int ROUNDS = 6;

    @Test
    void anIdleSseReadGetsAControlEventEveryInterval() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true",
                "--durable-streams-long-poll", "200ms")) {
            String path = "/v1/stream/keepalive/idle";
            assertEquals(201, send("PUT", server.base() + path, null, "Content-Type", "text/plain").statusCode());
            String clock = server.base() + "/v1/stream/keepalive/clock";
            HttpResponse<String> created = send("PUT", clock, null, "Content-Type", "text/plain");
            assertEquals(201, created.statusCode());
            String tail = created.headers().firstValue("Stream-Next-Offset").orElseThrow();
            AtomicInteger timeouts = new AtomicInteger();
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicBoolean clockFailed = new AtomicBoolean();
            Thread longPolls = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (running.get()) {
                        HttpResponse<String> r = send("GET", clock + "?offset=" + tail + "&live=long-poll", null);
                        if (r.statusCode() != 204) {
                            throw new IllegalStateException("long-poll of an idle stream: " + r.statusCode());
                        }
                        timeouts.incrementAndGet();
                    }
                } catch (Exception e) {
                    clockFailed.set(true);
                }
            });
            URI base = URI.create(server.base());
            try (Socket socket = new Socket(base.getHost(), base.getPort())) {
                socket.setSoTimeout(60_000); // a liveness bound only: a keep-alive never sent fails here
                socket.getOutputStream().write(("GET " + path + "?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                InputStream in = socket.getInputStream();
                StringBuilder seen = new StringBuilder();
                byte[] buf = new byte[4096];
                // the first control event comes with the answer (up to date); the count starts at the next one
                int controls = 0;
                int timeoutsAtFirst = -1;
                while (controls < ROUNDS + 2) {
                    int n = in.read(buf);
                    assertTrue(n > 0, "the SSE response ended after " + controls + " control events: " + seen);
                    seen.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
                    controls = seen.toString().split("event: control", -1).length - 1;
                    if (controls >= 2 && timeoutsAtFirst < 0) {
                        timeoutsAtFirst = timeouts.get();
                    }
                }
                int longPollTimeouts = timeouts.get() - timeoutsAtFirst;
                running.set(false);
                System.out.printf("sse keep-alive: %d intervals of the SSE reader, %d long-poll timeouts of the"
                        + " same interval meanwhile%n", controls - 2, longPollTimeouts);
                assertFalse(seen.toString().contains("event: data"), "an idle stream: control events only");
                assertFalse(clockFailed.get(), "the long-poll reader (the clock) was answered 204 each time");
                assertTrue(longPollTimeouts <= 2 * (controls - 2), (controls - 2) + " keep-alive intervals took as"
                        + " long as " + longPollTimeouts + " long-poll timeouts of the same --durable-streams-long-poll:"
                        + " the keep-alive is not sent every interval");
            } finally {
                running.set(false);
                longPolls.join(5_000);
            }
        }
    }
}
