package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A parked SSE reader keeps one timer at a time (the keep-alive tick re-armed each round): an idle SSE read gets a
 * control event every {@code --durable-streams-long-poll}, round after round, over a real socket.
 */
class SseKeepAliveTest {
    @Test
    void anIdleSseReadGetsAControlEventEveryInterval() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true",
                "--durable-streams-long-poll", "200ms")) {
            String path = "/v1/stream/keepalive/idle";
            assertEquals(201, send("PUT", server.base() + path, null, "Content-Type", "text/plain").statusCode());
            URI base = URI.create(server.base());
            try (Socket socket = new Socket(base.getHost(), base.getPort())) {
                socket.setSoTimeout(20_000);
                socket.getOutputStream().write(("GET " + path + "?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                InputStream in = socket.getInputStream();
                StringBuilder seen = new StringBuilder();
                byte[] buf = new byte[4096];
                long deadline = System.nanoTime() + 20_000_000_000L;
                int controls = 0;
                while (controls < 6 && System.nanoTime() < deadline) {
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    seen.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
                    controls = seen.toString().split("event: control", -1).length - 1;
                }
                assertTrue(controls >= 6, "keep-alive control events kept coming, saw " + controls + ": " + seen);
            }
        }
    }
}
