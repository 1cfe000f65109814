package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.ConnectionFootprint;
import io.iqstream.server.testing.DurableHttp;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.MachineFact;
import io.iqstream.server.testing.ServerProcess;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Five thousand idle live readers on one server: AG-UI SSE on an open, quiet run, Durable Streams SSE and
 * long-poll on one stream. Every one is held (each SSE reader has its response head, the server counts every
 * connection as an idle reader), the server's heap grows by less than its own per-reader estimate for them
 * (a histogram of its live heap, after a full GC, before and after), every reader gets the next event, and every
 * connection then serves its next request (the request path each one dropped while it waited is back).
 * Counts and bytes only, no clock. The server runs in its own JVM (its heap is measured alone).
 */
class IdleReadersTest {
    private static final int AGUI = 2000;
    private static final int DS_SSE = 1500;
    private static final int DS_LONG_POLL = 1500;
    private static final int READERS = AGUI + DS_SSE + DS_LONG_POLL;
    private static final Pattern HISTOGRAM_TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");

    @Test
    void holdsFiveThousandIdleReadersUnderTheirEstimateAndWakesEveryOne() throws Exception {
        long files = openFileLimit();
        MachineFact.assume("open-files", files > READERS + 1000,
                "ulimit -n is " + files + " in the test JVM: " + READERS + " client sockets need more");
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        MachineFact.assume("jcmd", Files.isExecutable(jcmd), "no " + jcmd + " to read the server's heap");
        try (ServerProcess server = ServerProcess.start(READERS * 2 + 1000, "--admin-port", "0",
                "--max-subscribers", "20000", "--max-connections", "20000", "--durable-streams-open", "true",
                "--durable-streams-long-poll", "300s", "--heartbeat", "300s", "--warmup", "0");
                Readers readers = new Readers(server.port())) {
            String base = "http://127.0.0.1:" + server.port();
            String admin = "http://127.0.0.1:" + server.adminPort();
            String pub = Tokens.publisher("*");
            String sub = Tokens.subscriber("*");
            assertEquals(200, Http.publish(base, "idle-run", pub,
                    "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"idle-run\"}").statusCode());
            assertEquals(201, DurableHttp.send("PUT", base + "/v1/stream/idle", "",
                    "Content-Type", "application/json").statusCode());
            byte[] agui = ("GET /v1/runs/idle-run/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + sub
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
            byte[] dsSse = "GET /v1/stream/idle?offset=-1&live=sse HTTP/1.1\r\nHost: x\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII);
            byte[] dsLongPoll = "GET /v1/stream/idle?offset=now&live=long-poll HTTP/1.1\r\nHost: x\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII);

            // a first round of each kind, then closed: the code and pools every reader uses are there before the count
            try (Readers warm = new Readers(server.port())) {
                warm.open(200, agui);
                warm.open(200, dsSse);
                warm.open(200, dsLongPoll);
                warm.await("warm-up readers held", () -> idleReaders(admin) == 600);
            }
            readers.await("warm-up readers gone", () -> idleReaders(admin) == 0);
            long heapBefore = liveHeapBytes(jcmd, server.pid());

            List<Integer> aguiReaders = readers.open(AGUI, agui);
            List<Integer> sseReaders = readers.open(DS_SSE, dsSse);
            List<Integer> longPolls = readers.open(DS_LONG_POLL, dsLongPoll);
            readers.await("every SSE reader has its response head", () -> readers.count(aguiReaders,
                    d -> d.contains("\r\n\r\n")) == AGUI && readers.count(sseReaders, d -> d.contains("\r\n\r\n"))
                    == DS_SSE);
            readers.await("every reader held as an idle reader", () -> idleReaders(admin) == READERS);
            long heapAfter = liveHeapBytes(jcmd, server.pid());

            long perReader = (heapAfter - heapBefore) / READERS;
            System.out.println("the server's live heap grew by " + perReader + " bytes per idle reader ("
                    + AGUI + " AG-UI SSE, " + DS_SSE + " Durable Streams SSE, " + DS_LONG_POLL + " long-poll)");
            assertTrue(perReader < ConnectionFootprint.IDLE_READER_BYTES, "the server's heap grew by " + perReader
                    + " bytes per idle reader, more than its estimate " + ConnectionFootprint.IDLE_READER_BYTES);
            assertTrue(perReader > 0, "the heap grew by " + perReader + " bytes per reader: the readers were counted");
            assertEquals(READERS * ConnectionFootprint.IDLE_READER_BYTES,
                    metric(admin, "iqstream_connections_idle_reader_bytes "), "the server's own count");
            assertEquals(0, readers.count(longPolls, d -> !d.isEmpty()), "no long-poll answered before its event");

            // the next event reaches every reader
            assertEquals(200, Http.publish(base, "idle-run", pub,
                    "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"idle-run\"}").statusCode());
            assertEquals(204, DurableHttp.send("POST", base + "/v1/stream/idle", "{\"n\":1}",
                    "Content-Type", "application/json").statusCode());
            readers.await("every AG-UI reader got event 2 and its response's end", () -> readers.count(aguiReaders,
                    d -> d.contains("id: 2\n") && d.endsWith("0\r\n\r\n")) == AGUI);
            readers.await("every Durable Streams SSE reader got the message", () -> readers.count(sseReaders,
                    d -> d.contains("{\"n\":1}")) == DS_SSE);
            readers.await("every long-poll answered with the message", () -> readers.count(longPolls,
                    d -> d.startsWith("HTTP/1.1 200") && d.endsWith("[{\"n\":1}]")) == DS_LONG_POLL);
            readers.await("no idle reader left but the open SSE reads", () -> idleReaders(admin) == DS_SSE);

            // the connections whose answer ended serve their next request: their request path is back
            readers.clear(aguiReaders);
            readers.clear(longPolls);
            readers.send(aguiReaders, ("GET /v1/runs/idle-run/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + sub + "\r\nLast-Event-ID: 2\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            readers.send(longPolls, "GET /v1/stream/idle?offset=-1 HTTP/1.1\r\nHost: x\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            readers.await("each AG-UI connection answers its next request (nothing new: 204)",
                    () -> readers.count(aguiReaders, d -> d.startsWith("HTTP/1.1 204")) == AGUI);
            readers.await("each long-poll connection answers a catch-up read", () -> readers.count(longPolls,
                    d -> d.startsWith("HTTP/1.1 200") && d.endsWith("[{\"n\":1}]")) == DS_LONG_POLL);
            assertEquals(0, readers.closedCount(), "no connection was closed");
        }
    }

    private static long openFileLimit() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u
                ? u.getMaxFileDescriptorCount() : 0;
    }

    /** The server's live heap after a full GC ({@code jcmd GC.class_histogram} collects first), in bytes. */
    private static long liveHeapBytes(Path jcmd, long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.class_histogram")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        Matcher m = HISTOGRAM_TOTAL.matcher(out);
        assertTrue(m.find(), "a class histogram: " + out);
        return Long.parseLong(m.group(1));
    }

    private static long idleReaders(String admin) {
        return metric(admin, "iqstream_connections{state=\"idle_reader\"} ");
    }

    private static long metric(String admin, String prefix) {
        try {
            for (String line : Http.get(admin + "/metrics").body().split("\n")) {
                if (line.startsWith(prefix)) {
                    return Long.parseLong(line.substring(prefix.length()).trim());
                }
            }
            return -1;
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Raw, non-blocking client connections, each with what it read so far; read while awaiting a condition. */
    private static final class Readers implements AutoCloseable {
        private final int port;
        private final Selector selector;
        private final List<SocketChannel> channels = new ArrayList<>();
        private final List<StringBuilder> read = new ArrayList<>();
        private final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        private int closed;

        Readers(int port) throws IOException {
            this.port = port;
            this.selector = Selector.open();
        }

        /** Opens {@code n} connections, each sending {@code request}; returns their indexes. */
        List<Integer> open(int n, byte[] request) throws IOException {
            List<Integer> ids = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
                ch.configureBlocking(false);
                int id = channels.size();
                channels.add(ch);
                read.add(new StringBuilder());
                ch.register(selector, SelectionKey.OP_READ, id);
                ids.add(id);
                write(ch, request);
                if (i % 100 == 99) {
                    poll(0);
                }
            }
            return ids;
        }

        void send(List<Integer> ids, byte[] request) throws IOException {
            for (int id : ids) {
                write(channels.get(id), request);
            }
        }

        private static void write(SocketChannel ch, byte[] request) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(request);
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }

        void clear(List<Integer> ids) {
            for (int id : ids) {
                read.get(id).setLength(0);
            }
        }

        int count(List<Integer> ids, Predicate<String> test) {
            int n = 0;
            for (int id : ids) {
                if (test.test(read.get(id).toString())) {
                    n++;
                }
            }
            return n;
        }

        int closedCount() {
            return closed;
        }

        interface Check {
            boolean holds() throws Exception;
        }

        /** Reads while waiting for {@code check}; an AssertionError naming {@code what} after two minutes. */
        void await(String what, Check check) throws Exception {
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (!check.holds()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("not within two minutes: " + what);
                }
                poll(100);
            }
        }

        private void poll(long timeoutMs) throws IOException {
            if (selector.select(timeoutMs) == 0) {
                return;
            }
            for (SelectionKey key : selector.selectedKeys()) {
                SocketChannel ch = (SocketChannel) key.channel();
                int id = (Integer) key.attachment();
                while (true) {
                    buffer.clear();
                    int n;
                    try {
                        n = ch.read(buffer);
                    } catch (IOException e) {
                        n = -1;
                    }
                    if (n < 0) {
                        key.cancel();
                        closed++;
                        break;
                    }
                    if (n == 0) {
                        break;
                    }
                    read.get(id).append(new String(buffer.array(), 0, n, StandardCharsets.ISO_8859_1));
                }
            }
            selector.selectedKeys().clear();
        }

        @Override
        public void close() throws IOException {
            for (SocketChannel ch : channels) {
                ch.close();
            }
            selector.close();
        }
    }
}
