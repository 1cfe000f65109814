package io.iqstream.server.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A refusal sent while the client is still writing its body reaches the client whole: the server shuts its output
 * after the answer and drains what still arrives, instead of closing on unread bytes. That close made the kernel
 * answer the client's next write with a reset, and an HTTP client that fails the request on a write error (the JS
 * publisher, Node's http) reported ECONNRESET, never the 409 waiting in its socket.
 */
class LingeringCloseTest {

    @Test
    void aRefusalMidBodyIsReadWholeByAClientStillWriting() throws Exception {
        try (TestServer server = TestServer.start()) {
            String token = Tokens.publisher("*");
            String ended = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r1\"}";
            assertEquals(200, Http.publish(server.base(), "r1", token, ended,
                    "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r1\"}").statusCode());
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write(("POST /v1/runs/r1/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + token
                        + "\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                // the server refuses at once (the run has ended); the client goes on writing its body meanwhile,
                // as a streaming publisher does before it reads anything
                byte[] line = (ended + "\n").getBytes(StandardCharsets.US_ASCII);
                byte[] chunk = (Integer.toHexString(line.length) + "\r\n" + ended + "\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII);
                long until = System.nanoTime() + 300_000_000L;
                int written = 0;
                try {
                    while (System.nanoTime() - until < 0 || written < 2_000) {
                        out.write(chunk);
                        written++;
                    }
                } catch (IOException e) {
                    // what the JS publisher met: its HTTP client fails the request on the write error and never
                    // reports the answer that is waiting in its socket
                    throw new AssertionError("the server reset the connection after " + written
                            + " chunks while the client was still writing its body", e);
                }
                String answer = readAll(s.getInputStream());
                assertTrue(answer.startsWith("HTTP/1.1 409 "), "the client did not get the refusal:\n" + answer);
                assertTrue(answer.contains("\"error\":\"run_ended\""), answer);
                assertTrue(answer.contains("connection: close"), answer);
            }
        }
    }

    @Test
    void aLingeringConnectionIsClosedWhenTheClientClosesItsSide() throws Exception {
        try (TestServer server = TestServer.start()) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                String answer = readAll(s.getInputStream()); // to the server's end of stream
                assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
                s.shutdownOutput();
            }
            // the lingering connection goes (a liveness bound only: at the client's end of stream or, at the latest,
            // at the linger limit; which of the two closed it is asserted below, on the handler itself)
            String[] metrics = new String[1];
            Conditions.await("the lingering connection closed", 30_000, () -> {
                try {
                    metrics[0] = Http.get(server.base() + "/metrics").body();
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
                // 1: the /metrics request's own connection
                return metrics[0].contains("\niqstream_connections_open 1\n");
            });
        }
    }

    /**
     * The close comes from the client's end of stream, not from the linger limit: on a channel whose loop runs
     * only what the test asks, the end of stream closes it while the limit's timer has not fired (no clock read, so
     * a busy machine cannot move it).
     */
    @Test
    void theClientsEndOfStreamClosesBeforeTheLingerLimit() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addFirst(new LingeringCloseHandler());
        ch.writeInbound(Unpooled.copiedBuffer("more of the body", StandardCharsets.US_ASCII));
        assertTrue(ch.isOpen(), "open while the client still writes (its bytes discarded)");
        assertNull(ch.readInbound(), "what still arrives is discarded, never decoded");
        ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
        assertFalse(ch.isOpen(), "closed at the client's end of stream, before the linger limit's timer");
    }

    private static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) {
                got.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no end of stream from the server after its answer: "
                    + got.toString(StandardCharsets.US_ASCII), e);
        }
        return got.toString(StandardCharsets.US_ASCII);
    }
}
