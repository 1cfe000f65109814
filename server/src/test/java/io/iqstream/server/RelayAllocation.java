package io.iqstream.server;

import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Measures the bytes the server's worker threads allocate per event relayed: a real server in this JVM, one chunked
 * NDJSON publisher streaming small {@code TEXT_MESSAGE_CONTENT} deltas (one event per HTTP chunk, each flushed,
 * the next sent once both subscribers have it: a live stream, one event per read and per write), two SSE
 * subscribers on real sockets. After a warm-up, {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}
 * over every {@code iqstream-*} thread, across the measured events, divided by them. Prints one line
 * {@code relay allocation: N B/event ...}. Run by {@link RelayAllocationTest} in a JVM of its own (Netty's leak
 * detector, which the test JVM runs at paranoid, allocates per buffer); by hand:
 * {@code java -cp <test classpath> io.iqstream.server.RelayAllocation [warmup] [measured]}.
 */
public final class RelayAllocation {
    private RelayAllocation() {
    }

    public static void main(String[] args) throws Exception {
        int warmup = args.length > 0 ? Integer.parseInt(args[0]) : 5_000;
        int measured = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        try (TestServer server = TestServer.start()) {
            String run = "alloc-run";
            String token = Tokens.admin();
            try (Socket publisher = new Socket("127.0.0.1", server.port())) {
                publisher.setTcpNoDelay(true);
                OutputStream out = new BufferedOutputStream(publisher.getOutputStream(), 4096);
                out.write(("POST /v1/runs/" + run + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
                        + "Authorization: Bearer " + token + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                sendEvent(out, "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"" + run + "\"}");
                List<SseClient> subscribers = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    subscribers.add(SseClient.open(server.port(), "/v1/runs/" + run + "/events",
                            "Authorization: Bearer " + token));
                }
                await(subscribers, 1);
                relay(out, subscribers, 0, warmup);
                long[] threads = serverThreads();
                com.sun.management.ThreadMXBean mx =
                        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                long before = sum(mx.getThreadAllocatedBytes(threads));
                relay(out, subscribers, warmup, measured);
                long after = sum(mx.getThreadAllocatedBytes(threads));
                double perEvent = (after - before) / (double) measured;
                System.out.printf("relay allocation: %.1f B/event (%d bytes on %d server threads over %d events,"
                        + " 2 subscribers, after %d warm-up events)%n", perEvent, after - before, threads.length,
                        measured, warmup);
                for (SseClient s : subscribers) {
                    s.close();
                }
            }
        }
    }

    /** Sends events {@code from+1 .. from+n}, each once both subscribers have the one before. */
    private static void relay(OutputStream out, List<SseClient> subscribers, int from, int n) throws Exception {
        for (int i = from + 1; i <= from + n; i++) {
            sendEvent(out, "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"tok" + i % 1000
                    + " \"}");
            await(subscribers, 1);
        }
    }

    private static void sendEvent(OutputStream out, String json) throws IOException {
        byte[] line = (json + "\n").getBytes(StandardCharsets.UTF_8);
        out.write((Integer.toHexString(line.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(line);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private static void await(List<SseClient> subscribers, int n) throws InterruptedException {
        for (SseClient s : subscribers) {
            s.take(n, 20_000);
        }
    }

    private static long[] serverThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("iqstream-"))
                .mapToLong(Thread::threadId).toArray();
    }

    private static long sum(long[] values) {
        long s = 0;
        for (long v : values) {
            s += v;
        }
        return s;
    }
}
