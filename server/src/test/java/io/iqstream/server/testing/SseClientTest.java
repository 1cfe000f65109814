package io.iqstream.server.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The test SSE client tells a clean end (the terminal chunk) from a cut connection, so that "the stream ended"
 * in a test cannot pass on a reset. A one-shot fake server writes exactly the bytes under test.
 */
class SseClientTest {
    private static final String HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n";
    private static final String FRAME = "id: 1\ndata: {\"type\":\"RUN_STARTED\"}\n\n";

    @Test
    void terminalChunkIsACleanEnd() throws Exception {
        try (ServerSocket ss = new ServerSocket(0)) {
            Thread t = serve(ss, HEAD + chunk(FRAME) + "0\r\n\r\n", false);
            try (SseClient c = SseClient.open(ss.getLocalPort(), "/x")) {
                assertEquals("1", c.next(5000).id());
                assertTrue(c.awaitEnd(5000));
                assertEquals(SseClient.End.CLEAN, c.end());
            }
            t.join(5000);
        }
    }

    @Test
    void closeWithoutTerminalChunkIsACut() throws Exception {
        try (ServerSocket ss = new ServerSocket(0)) {
            Thread t = serve(ss, HEAD + chunk(FRAME), true);
            try (SseClient c = SseClient.open(ss.getLocalPort(), "/x")) {
                assertEquals("1", c.next(5000).id());
                assertEquals(SseClient.End.CUT, c.awaitClose(5000));
                AssertionError e = assertThrows(AssertionError.class, () -> c.awaitEnd(1000));
                assertTrue(e.getMessage().contains("CUT"), e.getMessage());
            }
            t.join(5000);
        }
    }

    @Test
    void closeInsideAChunkIsACut() throws Exception {
        try (ServerSocket ss = new ServerSocket(0)) {
            String whole = chunk(FRAME);
            Thread t = serve(ss, HEAD + whole.substring(0, whole.length() - 10), true);
            try (SseClient c = SseClient.open(ss.getLocalPort(), "/x")) {
                assertEquals(SseClient.End.CUT, c.awaitClose(5000));
            }
            t.join(5000);
        }
    }

    private static String chunk(String s) {
        return Integer.toHexString(s.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + s + "\r\n";
    }

    /** Accepts one connection, reads the request head, writes {@code bytes}, then closes (or keeps it open). */
    private static Thread serve(ServerSocket ss, String bytes, boolean close) {
        Thread t = new Thread(() -> {
            try {
                Socket s = ss.accept();
                String line;
                do {
                    line = SseClient.ChunkedInputStream.readLine(s.getInputStream());
                } while (line != null && !line.isEmpty());
                OutputStream out = s.getOutputStream();
                out.write(bytes.getBytes(StandardCharsets.UTF_8));
                out.flush();
                if (close) {
                    s.close();
                }
            } catch (Exception ignored) {
                // the test reports what the client saw
            }
        }, "fake-sse-server");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
