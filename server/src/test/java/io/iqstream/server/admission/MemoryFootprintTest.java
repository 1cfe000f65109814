package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.http.IqStreamInitializer;
import io.iqstream.server.run.RunLog;
import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The memory figures the plan and the budget are built on, measured on the real server in its own JVM rather than
 * taken from the formula: the heap from that JVM's own counters after full collections ({@link ChildHeap}), the
 * direct memory as the pool's pages in use ({@code iqstream_direct_memory_active_bytes}: to the page, where
 * {@code iqstream_direct_memory_used_bytes} counts whole 4 MiB chunks and would hide up to a chunk's growth).
 * <ul>
 *   <li>per connection: {@value #CONNECTIONS} connections holding maximal request heads (the request line and the
 *       headers at the decoder's limits, {@link IqStreamInitializer#MAX_INITIAL_LINE_BYTES} and
 *       {@link IqStreamInitializer#MAX_HEADER_BYTES}), first as streaming subscribers (the head decoded and kept),
 *       then as heads that never end (being decoded): each must hold no more than
 *       {@link MemoryPlan#CONNECTION_HEAP_BYTES} of heap and {@link MemoryPlan#CONNECTION_DIRECT_BYTES} of direct
 *       memory, the worst case the plan counts;</li>
 *   <li>per run: {@value #RUNS} ended runs held for retention: the heap each holds must be no more than the heap
 *       the budget charges for it ({@link RunLog#RUN_OVERHEAD_BYTES} + {@link RunLog#SEGMENT_OVERHEAD_BYTES} per
 *       segment).</li>
 * </ul>
 * The figures are printed ("memory footprint: ..."); docs/OPERATIONS.md quotes them with this test's command.
 */
class MemoryFootprintTest {
    static final int CONNECTIONS = 400;
    static final int RUNS = 4000;
    private static final List<String> JVM = List.of("-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseG1GC");

    @Test
    void connectionsWithMaximalHeadsAndEndedRunsHoldNoMoreThanCounted() throws Exception {
        String admin = Tokens.admin();
        try (SmallJvmServer server = SmallJvmServer.start(JVM, "--memory-budget", "64m", "--header-timeout", "300s",
                "--idle-timeout", "300s", "--retention", "10m", "--heartbeat", "300s");
                ChildHeap heap = ChildHeap.attach(server.pid())) {
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "held", "application/x-ndjson", admin);
            pub.send("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"held\"}\n");
            Conditions.await("run held exists", 10_000, () -> status(server, "held", admin) == 200);
            long connectionsAtRest = connectionsOpen(server);

            // 1. streaming subscribers whose heads were maximal: decoded, answered 200, kept open
            long heap0 = heap.liveBytes();
            long direct0 = direct(server);
            List<Socket> subscribers = new ArrayList<>();
            try {
                for (int i = 0; i < CONNECTIONS; i++) {
                    Socket s = new Socket("127.0.0.1", server.port());
                    s.setSoTimeout(20_000);
                    s.getOutputStream().write(maximalHead("/v1/runs/held/events", admin, i, true));
                    subscribers.add(s);
                }
                for (Socket s : subscribers) {
                    assertEquals("HTTP/1.1 200 OK", statusLine(s.getInputStream()), "a maximal head is served");
                }
                long heapPerSubscriber = (heap.liveBytes() - heap0) / CONNECTIONS;
                long directPerSubscriber = (direct(server) - direct0) / CONNECTIONS;

                closeAll(subscribers);
                Conditions.await("the subscribers' connections closed", 20_000,
                        () -> connectionsOpen(server) <= connectionsAtRest);

                // 2. heads that never end: the line and headers at their limits, the final CRLF never sent
                long heap1 = heap.liveBytes();
                long direct1 = direct(server);
                List<Socket> partial = new ArrayList<>();
                try {
                    for (int i = 0; i < CONNECTIONS; i++) {
                        Socket s = new Socket("127.0.0.1", server.port());
                        s.getOutputStream().write(maximalHead("/v1/runs/held/events", admin, i, false));
                        partial.add(s);
                    }
                    Conditions.await("the server holds the partial heads", 20_000,
                            () -> connectionsOpen(server) >= connectionsAtRest + CONNECTIONS);
                    // the heads' bytes are read as they come: the server's heap stops growing once they are all in
                    long[] last = {heap.liveBytes()};
                    Conditions.await("the partial heads are read (live heap steady)", 30_000, () -> {
                        long now = heap.liveBytes();
                        boolean steady = Math.abs(now - last[0]) < 64 * 1024;
                        last[0] = now;
                        return steady && now - heap1 > CONNECTIONS * 8L * 1024;
                    });
                    long heapPerPartial = (last[0] - heap1) / CONNECTIONS;
                    long directPerPartial = (direct(server) - direct1) / CONNECTIONS;

                    System.out.printf("memory footprint: %d connections with maximal heads (line %d B, headers %d B):"
                            + " streaming subscribers %,d B heap and %,d B direct each; heads never ended %,d B heap"
                            + " and %,d B direct each (plan counts %,d B heap, %,d B direct)%n", CONNECTIONS,
                            IqStreamInitializer.MAX_INITIAL_LINE_BYTES, IqStreamInitializer.MAX_HEADER_BYTES,
                            heapPerSubscriber, directPerSubscriber, heapPerPartial, directPerPartial,
                            MemoryPlan.CONNECTION_HEAP_BYTES, MemoryPlan.CONNECTION_DIRECT_BYTES);
                    for (long h : new long[] {heapPerSubscriber, heapPerPartial}) {
                        assertTrue(h <= MemoryPlan.CONNECTION_HEAP_BYTES, "a connection with a maximal head holds "
                                + h + " B of heap, more than the plan's " + MemoryPlan.CONNECTION_HEAP_BYTES);
                    }
                    for (long d : new long[] {directPerSubscriber, directPerPartial}) {
                        assertTrue(d <= MemoryPlan.CONNECTION_DIRECT_BYTES, "a connection with a maximal head holds "
                                + d + " B of direct memory, more than the plan's " + MemoryPlan.CONNECTION_DIRECT_BYTES);
                    }
                } finally {
                    closeAll(partial);
                }
            } finally {
                closeAll(subscribers);
            }
            Conditions.await("the partial heads' connections closed", 20_000,
                    () -> connectionsOpen(server) <= connectionsAtRest);

            // 3. ended runs held for retention: one small segment each
            long heap2 = heap.liveBytes();
            long used2 = SmallJvmServer.metric(Http.get(server.base() + "/metrics").body(), "iqstream_memory_used_bytes");
            for (int r = 0; r < RUNS; r++) {
                String run = "footprint-" + r;
                assertEquals(200, Http.publish(server.base(), run, admin,
                        "{\"type\":\"RUN_STARTED\",\"threadId\":\"thread-" + r + "\",\"runId\":\"" + run + "\"}",
                        "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"hello\"}",
                        "{\"type\":\"RUN_FINISHED\",\"threadId\":\"thread-" + r + "\",\"runId\":\"" + run + "\"}")
                        .statusCode());
            }
            long heapPerRun = (heap.liveBytes() - heap2) / RUNS;
            long chargedPerRun = (SmallJvmServer.metric(Http.get(server.base() + "/metrics").body(),
                    "iqstream_memory_used_bytes") - used2) / RUNS;
            long chargedHeap = RunLog.RUN_OVERHEAD_BYTES + RunLog.SEGMENT_OVERHEAD_BYTES;
            System.out.printf("memory footprint: %d ended 3-event runs (one segment each): %,d B of heap each"
                    + " (the budget charges %,d B of heap objects, %,d B in all)%n", RUNS, heapPerRun, chargedHeap,
                    chargedPerRun);
            assertTrue(heapPerRun <= chargedHeap, "an ended run holds " + heapPerRun + " B of heap, more than the "
                    + chargedHeap + " B the budget charges for its objects");
            pub.close();
            assertTrue(server.isAlive(), server.output());
        }
    }

    /**
     * A GET of {@code path} whose request line is {@link IqStreamInitializer#MAX_INITIAL_LINE_BYTES} long less a
     * margin (a padding query parameter) and whose headers fill {@link IqStreamInitializer#MAX_HEADER_BYTES} less
     * a margin; {@code complete} false leaves out the blank line that ends the head.
     */
    static byte[] maximalHead(String path, String token, int n, boolean complete) {
        String start = "GET " + path + "?pad" + n + "=";
        String end = " HTTP/1.1";
        String line = start + "a".repeat(IqStreamInitializer.MAX_INITIAL_LINE_BYTES - 64 - start.length() - end.length())
                + end + "\r\n";
        StringBuilder headers = new StringBuilder("Host: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer "
                + token + "\r\n");
        int budget = IqStreamInitializer.MAX_HEADER_BYTES - 512;
        for (int i = 0; headers.length() < budget; i++) {
            int room = Math.min(4000, budget - headers.length() - 16);
            if (room <= 0) {
                break;
            }
            headers.append("X-Pad-").append(i).append(": ").append("b".repeat(room)).append("\r\n");
        }
        return (line + headers + (complete ? "\r\n" : "")).getBytes(StandardCharsets.US_ASCII);
    }

    private static String statusLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int b;
        while ((b = in.read()) != -1 && b != '\n') {
            sb.append((char) b);
        }
        return sb.toString().trim();
    }

    private static long direct(SmallJvmServer server) throws Exception {
        return SmallJvmServer.metric(Http.get(server.base() + "/metrics").body(), "iqstream_direct_memory_active_bytes");
    }

    private static long connectionsOpen(SmallJvmServer server) {
        try {
            return SmallJvmServer.metric(Http.get(server.base() + "/metrics").body(), "iqstream_connections_open");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static int status(SmallJvmServer server, String run, String token) {
        try {
            return Http.get(server.base() + "/v1/runs/" + run, "Authorization", "Bearer " + token).statusCode();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void closeAll(List<Socket> sockets) {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }
}
