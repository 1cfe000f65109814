package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Readers of a Durable Stream that never read their socket: parked SSE readers of a large binary stream (each
 * would otherwise pin a base64 copy of the whole stream in its connection's outbound buffer), and a client that
 * pipelines catch-up reads without reading the answers. Each must be bounded by the connection's writability — an
 * SSE reader is a cursor that writes while its socket drains, and is cut after {@code --max-subscriber-lag}; a
 * connection whose answers are not read is not read either — with no out-of-memory error, and an honest reader of
 * the same stream served whole beside them. Each test has its own server, sized as the launcher sizes one for its
 * budget ({@link HostileServer}).
 */
class HostileDurableReadersTest {
    private static final int MESSAGE_BYTES = 128 * 1024;

    @Test
    void parkedSseReadersOfABigBinaryStreamHoldNoCopyOfIt() throws Exception {
        // 16m budget: about 37 MiB of direct memory. The stream is 6 MiB, 8 MiB in base64 per reader
        try (HostileServer server = HostileServer.start("--durable-streams-open", "true",
                "--max-subscriber-lag", "300s")) {
            String tail = binaryStream(server.port(), "/v1/stream/big", 48);
            List<Socket> parked = new ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    parked.add(parkedSseReader(server.port(), "/v1/stream/big"));
                }
                Conditions.await("8 SSE readers open", 10_000,
                        () -> server.metricNow("iqstream_durable_sse_readers") == 8);
                // what the parked readers made the server hold settles (each only up to its write buffer)
                long direct = Conditions.steady("direct memory with parked readers", 30_000, 200, 5, 1 << 20,
                        () -> server.metricNow("iqstream_direct_memory_used_bytes"));
                assertTrue(direct < 32L << 20, "8 parked readers of a 6 MiB stream hold " + direct
                        + " bytes of direct memory " + server.describe());
                // an honest reader of the same stream gets every message, to the tail
                SseRead honest = readSseToTail(server.port(), "/v1/stream/big", tail, 60_000);
                assertEquals(48, honest.dataEvents, "every message, " + server.describe());
                server.assertSound();
            } finally {
                for (Socket s : parked) {
                    s.close();
                }
            }
        }
    }

    @Test
    void anSseReaderWhoseSocketStaysFullIsCutAfterTheLagLimit() throws Exception {
        try (HostileServer server = HostileServer.start("--durable-streams-open", "true",
                "--max-subscriber-lag", "1s")) {
            binaryStream(server.port(), "/v1/stream/lag", 24);
            try (Socket parked = parkedSseReader(server.port(), "/v1/stream/lag")) {
                Conditions.await("the parked reader is cut " + server.describe(), 20_000,
                        () -> server.metricNow("iqstream_slow_subscribers_cut_total") == 1
                                && server.metricNow("iqstream_durable_sse_readers") == 0);
                assertTrue(RawHttp.awaitClosed(parked, 20_000), "the cut reader's connection is closed");
            }
            server.assertSound();
        }
    }

    @Test
    void pipelinedCatchUpReadsAreNotReadWhileTheirAnswersAreUnread() throws Exception {
        try (HostileServer server = HostileServer.start("--durable-streams-open", "true")) {
            binaryStream(server.port(), "/v1/stream/pages", 2); // each answer is 256 KiB
            int requests = 300;
            String pad = "X-Pad: " + "p".repeat(4000) + "\r\n";
            byte[] one = ("GET /v1/stream/pages?offset=-1 HTTP/1.1\r\nHost: x\r\n" + pad + "\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            long readsBefore = server.metric("iqstream_durable_reads_total");
            try (Socket s = smallWindowSocket(server.port())) {
                AtomicInteger written = new AtomicInteger();
                Thread writer = Thread.ofVirtual().start(() -> {
                    try {
                        for (int i = 0; i < requests; i++) {
                            s.getOutputStream().write(one);
                            written.incrementAndGet();
                        }
                    } catch (IOException e) {
                        // the socket is closed at the end of the test while this may still block
                    }
                });
                // the answers the server wrote while nobody reads them settle well below the requests sent
                long answered = Conditions.steady("catch-up answers to an unread connection", 60_000, 300, 6, 0,
                        () -> server.metricNow("iqstream_durable_reads_total")) - readsBefore;
                assertTrue(answered < requests / 3, answered + " of " + requests + " pipelined reads answered ("
                        + written.get() + " written) while the client read none " + server.describe());
                // once the client reads, every request is answered, in order
                RawHttp.Responses in = RawHttp.responses(s, 120_000);
                for (int i = 0; i < requests; i++) {
                    RawHttp.Response r = in.next();
                    assertEquals(200, r.status(), "answer " + i + ": " + r);
                    assertEquals(2 * MESSAGE_BYTES, r.body().length, "answer " + i);
                }
                writer.join(10_000);
            }
            server.assertSound();
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    /** Creates a binary stream of {@code messages} messages of 128 KiB; returns its tail offset. */
    static String binaryStream(int port, String path, int messages) throws IOException {
        RawHttp.Response created = RawHttp.exchange(port, "PUT " + path + " HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/octet-stream\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 10_000);
        assertEquals(201, created.status(), created.toString());
        byte[] body = new byte[MESSAGE_BYTES];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 31 + 7);
        }
        String tail = null;
        for (int i = 0; i < messages; i++) {
            RawHttp.Response r = RawHttp.exchange(port, append(path, body), 10_000);
            assertEquals(204, r.status(), "append " + i + ": " + r);
            tail = r.header("Stream-Next-Offset");
        }
        return tail;
    }

    static byte[] append(String path, byte[] body) {
        byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return all;
    }

    /** A socket whose receive window is as small as the kernel allows, so the server's writes back up at once. */
    static Socket smallWindowSocket(int port) throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096);
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(RawHttp.HOST, port), 5_000);
        s.setSoTimeout(10_000);
        return s;
    }

    /** Opens an SSE read from the start of {@code path} and never reads it. */
    static Socket parkedSseReader(int port, String path) throws IOException {
        Socket s = smallWindowSocket(port);
        RawHttp.write(s, "GET " + path + "?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n");
        return s;
    }

    /** What an SSE read saw: its data events, up to the control event at the tail. */
    record SseRead(int dataEvents) {}

    /** Reads an SSE response from the start of {@code path} until its control event at {@code tail}. */
    static SseRead readSseToTail(int port, String path, String tail, long timeoutMs) throws IOException {
        byte[] atTail = ("\"streamNextOffset\":\"" + tail + "\"").getBytes(StandardCharsets.US_ASCII);
        byte[] data = "event: data\n".getBytes(StandardCharsets.US_ASCII);
        try (Socket s = RawHttp.connect(port)) {
            RawHttp.write(s, "GET " + path + "?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            InputStream in = s.getInputStream();
            ByteArrayOutputStream seen = new ByteArrayOutputStream(16 << 20);
            byte[] buf = new byte[64 * 1024];
            long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            int searchedTo = 0;
            while (System.nanoTime() < deadline) {
                int n;
                try {
                    n = in.read(buf);
                } catch (SocketTimeoutException e) {
                    continue;
                }
                if (n < 0) {
                    break;
                }
                seen.write(buf, 0, n);
                byte[] all = seen.toByteArray();
                int found = indexOf(all, atTail, Math.max(0, searchedTo - atTail.length));
                searchedTo = all.length;
                if (found >= 0) {
                    return new SseRead(count(all, data));
                }
            }
            throw new AssertionError("the SSE read did not reach the tail " + tail + " (" + seen.size() + " bytes)");
        }
    }

    private static int indexOf(byte[] in, byte[] what, int from) {
        outer:
        for (int i = from; i <= in.length - what.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (in[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static int count(byte[] in, byte[] what) {
        int n = 0;
        for (int i = indexOf(in, what, 0); i >= 0; i = indexOf(in, what, i + what.length)) {
            n++;
        }
        return n;
    }
}
