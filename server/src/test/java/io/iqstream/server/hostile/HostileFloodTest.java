package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.Tokens;
import io.iqstream.server.worker.Workers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A worker stays responsive while one publisher floods a run it owns (issue 31, item 6). On the launcher's JVM
 * flags, two workers: one publisher sends tiny events as fast as the socket takes them (a new run each time the
 * last is full), and on the same worker, on other connections, the test measures three things at once: a status
 * request of another run, a small publish of a new run, and the delivery of a live event of a third run (its
 * publisher's send to its reader's receive). The same three are measured first without the flood, in the same
 * server, as the peer the flood's figures are compared with (a loaded CI machine moves both).
 *
 * <p>Asserted: under the flood each p99 stays under 50 ms or under three times its calm p99 plus 20 ms, whichever
 * is larger (the 50 ms on an idle machine; on a busy 2-CPU VM the calm figure itself moves), and the
 * flood really ran (megabytes taken). The figures are printed ({@code flood isolation:} lines) for the closing
 * note; the old tree printed a p99 of seconds here.
 */
class HostileFloodTest {
    private static final String TOKEN = Tokens.admin();
    private static final long PHASE_MS = 4_000;

    /** Run ids on worker 0 of 2, from {@code prefix}. */
    private static String onWorkerZero(String prefix, int n) {
        for (int i = n; ; i++) {
            String id = prefix + i;
            if (Workers.indexOf(id, 2) == 0) {
                return id;
            }
        }
    }

    @Test
    void statusPublishAndLiveReadsOfOtherRunsStayFastWhileOneRunIsFlooded() throws Exception {
        try (HostileServer server = HostileServer.start("--workers", "2", "--memory-budget", "64m",
                "--max-run-bytes", "16m", "--retention", "1s", "--tombstone", "1s")) {
            int port = server.port();
            String statusRun = onWorkerZero("calm-status-", 0);
            RawHttp.exchange(port, RawHttp.publish(statusRun, "application/x-ndjson", TOKEN,
                    "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n".getBytes(StandardCharsets.UTF_8)),
                    10_000);
            String liveRun = onWorkerZero("calm-live-", 0);
            try (ChunkedPublisher live = ChunkedPublisher.open(port, liveRun, "application/x-ndjson", TOKEN);
                    SseClient reader = openReader(port, liveRun, live)) {
                Figures calm = measure(port, statusRun, live, reader, "calm");
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong flooded = new AtomicLong();
                Thread flooder = new Thread(() -> flood(port, stop, flooded), "flooder");
                flooder.start();
                Figures flood;
                long eventsBefore;
                long eventsAfter;
                try {
                    Thread.sleep(500); // the flood under way
                    eventsBefore = server.metric("iqstream_events_in_total");
                    flood = measure(port, statusRun, live, reader, "flood");
                    eventsAfter = server.metric("iqstream_events_in_total");
                } finally {
                    stop.set(true);
                    flooder.join(20_000);
                }
                long appended = eventsAfter - eventsBefore;
                String report = "flood isolation: calm " + calm + "; flood " + flood + "; the flood sent "
                        + flooded.get() / (1024 * 1024) + " MiB, events appended while measured: " + appended + " ("
                        + appended * 1000 / PHASE_MS + "/s)";
                System.out.println(report);
                assertTrue(appended > 200_000, "the flood ran: " + report);
                assertWithin("status", calm.status, flood.status, report);
                assertWithin("publish", calm.publish, flood.publish, report);
                assertWithin("live read", calm.live, flood.live, report);
            }
            server.assertSound();
        }
    }

    /**
     * The same flood, with 1,000 readers of the flooded run that never read (each resumes from the start, so each
     * would need the whole log), connecting while the probes run: they share the log's bytes (no copy each), so
     * the memory in use stays within the budget; the kernel's socket memory they hold grows by their send buffers,
     * not by megabytes each (left to autotuning, it reached the host's TCP limit and a status waited 13 s for
     * retransmits); and a status request and a live reader of other runs of the worker keep their latency (each
     * reader's catch-up is bounded per loop turn). The status probe's connection is open before the readers
     * connect: a connection opened behind a burst of 1,000 waits in the accept queue (16 accepts per loop turn),
     * which is not what this measures. Like the test above, its latency bounds need a machine that is not
     * saturated: on the shared 2-CPU VM at load 8 both failed (the one above on main 54b798e too).
     */
    @Test
    void aThousandReadersThatNeverReadAFloodedRunCostNoCopiesAndNoLatency() throws Exception {
        try (HostileServer server = HostileServer.start("--workers", "2", "--memory-budget", "64m",
                "--max-run-bytes", "16m", "--retention", "1s", "--tombstone", "1s")) {
            int port = server.port();
            String statusRun = onWorkerZero("calm-status-", 0);
            RawHttp.exchange(port, RawHttp.publish(statusRun, "application/x-ndjson", TOKEN,
                    "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n".getBytes(StandardCharsets.UTF_8)),
                    10_000);
            String liveRun = onWorkerZero("calm-live-", 0);
            List<Socket> idle = Collections.synchronizedList(new ArrayList<>());
            try (ChunkedPublisher live = ChunkedPublisher.open(port, liveRun, "application/x-ndjson", TOKEN);
                    SseClient reader = openReader(port, liveRun, live)) {
                Figures calm = measure(port, statusRun, live, reader, "calm");
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong flooded = new AtomicLong();
                Thread flooder = new Thread(() -> flood(port, stop, flooded), "flooder");
                flooder.start();
                Figures flood;
                long budget = server.metric("iqstream_memory_budget_bytes");
                long mostUsed = 0;
                long tcpBefore = kernelTcpMemoryBytes();
                AtomicLong tcpMost = new AtomicLong(tcpBefore);
                Thread readers = new Thread(() -> openIdleReaders(port, idle, tcpMost), "idle-readers");
                try {
                    Thread.sleep(300);
                    readers.start();
                    flood = measure(port, statusRun, live, reader, "readers");
                    mostUsed = server.metric("iqstream_memory_used_bytes");
                    tcpMost.accumulateAndGet(kernelTcpMemoryBytes(), Math::max);
                } finally {
                    stop.set(true);
                    readers.join(60_000);
                    flooder.join(20_000);
                    synchronized (idle) {
                        for (Socket s : idle) {
                            s.close();
                        }
                    }
                }
                long tcpGrowth = tcpBefore < 0 ? -1 : tcpMost.get() - tcpBefore;
                String report = "flood with 1,000 idle readers (" + idle.size() + " connected): calm " + calm
                        + "; flood " + flood + "; memory used " + mostUsed / (1024 * 1024) + " MiB of a "
                        + budget / (1024 * 1024) + " MiB budget; kernel TCP memory grew by at most "
                        + tcpGrowth / (1024 * 1024) + " MiB (host-wide, /proc/net/sockstat)";
                System.out.println(report);
                assertTrue(idle.size() == 1_000, "every reader connected: " + report);
                assertTrue(mostUsed <= budget + budget / 4, "memory within the budget (and its run headroom): "
                        + report);
                // 1,000 send buffers of 256 KiB (128 KiB asked, doubled by Linux) plus the readers' own receive
                // queues; autotuned, it was over 2 GiB
                assertTrue(tcpGrowth < 640L * 1024 * 1024, "kernel socket memory bounded per reader: " + report);
                // the 1,000 connects are accepted on the workers during this window, so its floor is 100 ms
                // (measured p99 25-59 ms on the 2-CPU VM; 13.7 s before the fix, 107 ms without the shared share)
                assertWithin("status", calm.status, flood.status, report, READERS_FLOOR_MS);
                assertWithin("live read", calm.live, flood.live, report, READERS_FLOOR_MS);
            }
            server.assertSound();
        }
    }

    /** Connects 1,000 readers of the run being flooded now, from event 0, that never read. */
    private static void openIdleReaders(int port, List<Socket> idle, AtomicLong tcpMost) {
        String flooding = onWorkerZero("flood-", 0);
        try {
            for (int i = 0; i < 1_000; i++) {
                Socket s = RawHttp.connect(port);
                s.setReceiveBufferSize(4096);
                idle.add(s);
                RawHttp.write(s, "GET /v1/runs/" + flooding + "/events HTTP/1.1\r\nHost: x\r\n"
                        + "Authorization: Bearer " + TOKEN + "\r\n\r\n");
                if (i % 50 == 0) {
                    tcpMost.accumulateAndGet(kernelTcpMemoryBytes(), Math::max);
                }
            }
        } catch (IOException e) {
            // counted: the test asserts that all 1,000 connected
        }
    }

    /** The host's TCP socket memory in bytes ({@code /proc/net/sockstat}, pages), or -1 where there is none. */
    private static long kernelTcpMemoryBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/net/sockstat"))) {
                if (line.startsWith("TCP:")) {
                    String[] f = line.trim().split("\\s+");
                    for (int i = 1; i + 1 < f.length; i++) {
                        if (f[i].equals("mem")) {
                            return Long.parseLong(f[i + 1]) * 4096;
                        }
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** The floor of the bound with 1,000 readers connecting during the measurement: their accepts share the loop. */
    private static final long READERS_FLOOR_MS = 100;

    private static void assertWithin(String what, List<Long> calm, List<Long> flood, String report) {
        assertWithin(what, calm, flood, report, 50);
    }

    private static void assertWithin(String what, List<Long> calm, List<Long> flood, String report, long floorMs) {
        long bound = Math.max(floorMs, 3 * p99(calm) + 20);
        assertTrue(flood.size() >= 10, what + ": too few samples under the flood: " + report);
        assertTrue(p99(flood) <= bound, what + " p99 under the flood " + p99(flood) + " ms, bound " + bound
                + " ms: " + report);
    }

    private static SseClient openReader(int port, String runId, ChunkedPublisher live) throws Exception {
        live.send("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n");
        SseClient reader = SseClient.open(port, "/v1/runs/" + runId + "/events", "Authorization: Bearer " + TOKEN);
        reader.next(10_000);
        return reader;
    }

    /** Latencies in ms of the three probes, over {@link #PHASE_MS}. */
    private record Figures(List<Long> status, List<Long> publish, List<Long> live) {
        @Override
        public String toString() {
            return "status p50/p99/max " + p50(status) + "/" + p99(status) + "/" + max(status) + " ms (n=" + status.size()
                    + "), publish " + p50(publish) + "/" + p99(publish) + "/" + max(publish) + " ms (n=" + publish.size()
                    + "), live read " + p50(live) + "/" + p99(live) + "/" + max(live) + " ms (n=" + live.size() + ")";
        }
    }

    private static Figures measure(int port, String statusRun, ChunkedPublisher live, SseClient reader, String phase)
            throws Exception {
        List<Long> status = Collections.synchronizedList(new ArrayList<>());
        List<Long> publish = Collections.synchronizedList(new ArrayList<>());
        List<Long> delivered = new ArrayList<>();
        long end = System.nanoTime() + PHASE_MS * 1_000_000L;
        Thread statuses = new Thread(() -> {
            try (Socket s = RawHttp.connect(port)) {
                String req = "GET /v1/runs/" + statusRun + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                        + "\r\n\r\n";
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    RawHttp.write(s, req);
                    RawHttp.read(s, 20_000);
                    status.add((System.nanoTime() - t0) / 1_000_000);
                    Thread.sleep(20);
                }
            } catch (Exception e) {
                status.add(Long.MAX_VALUE / 4);
            }
        });
        Thread publishes = new Thread(() -> {
            int i = 0;
            while (System.nanoTime() < end) {
                String id = onWorkerZero("calm-pub-" + phase + "-", i);
                i = Integer.parseInt(id.substring(id.lastIndexOf('-') + 1)) + 1;
                long t0 = System.nanoTime();
                try {
                    RawHttp.exchange(port, RawHttp.publish(id, "application/x-ndjson", TOKEN,
                            ("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n"
                                    + "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}\n")
                                    .getBytes(StandardCharsets.UTF_8)), 20_000);
                    publish.add((System.nanoTime() - t0) / 1_000_000);
                    Thread.sleep(50);
                } catch (Exception e) {
                    publish.add(Long.MAX_VALUE / 4);
                    return;
                }
            }
        });
        statuses.start();
        publishes.start();
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            live.send("{\"type\":\"CUSTOM\",\"name\":\"probe\",\"value\":" + t0 + "}\n");
            SseClient.Event e = reader.next(20_000);
            delivered.add(e == null ? Long.MAX_VALUE / 4 : (System.nanoTime() - t0) / 1_000_000);
            Thread.sleep(20);
        }
        statuses.join(30_000);
        publishes.join(30_000);
        return new Figures(new ArrayList<>(status), new ArrayList<>(publish), delivered);
    }

    /** One publisher, tiny events as fast as the socket takes them; a new run of worker 0 when one is full. */
    private static void flood(int port, AtomicBoolean stop, AtomicLong sent) {
        byte[] event = "{\"type\":\"CUSTOM\",\"name\":\"f\",\"value\":1}\n".getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        while (data.size() < 60_000) {
            data.writeBytes(event);
        }
        byte[] chunk = RawHttp.chunk(data.toByteArray());
        int run = 0;
        while (!stop.get()) {
            String id = onWorkerZero("flood-", run);
            run = Integer.parseInt(id.substring(id.lastIndexOf('-') + 1)) + 1;
            try (Socket s = RawHttp.connect(port)) {
                // the run's answer (413 once it is full) closes this socket, so the writes below fail: next run
                Thread answer = new Thread(() -> {
                    try {
                        RawHttp.read(s, 120_000);
                    } catch (IOException | AssertionError e) {
                        // closed without an answer: the writer sees it too
                    } finally {
                        try {
                            s.close();
                        } catch (IOException ignored) {
                            // closing
                        }
                    }
                }, "flood-answer");
                answer.setDaemon(true);
                answer.start();
                OutputStream out = s.getOutputStream();
                out.write(RawHttp.publishHead(id, "application/x-ndjson", TOKEN).getBytes(StandardCharsets.US_ASCII));
                out.write(RawHttp.chunk("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n"));
                while (!stop.get()) {
                    out.write(chunk);
                    sent.addAndGet(chunk.length);
                }
            } catch (IOException e) {
                // the run is full (413, closed) or the server cut the publish: the next run
            }
        }
    }

    private static long p50(List<Long> xs) {
        return quantile(xs, 0.50);
    }

    private static long p99(List<Long> xs) {
        return quantile(xs, 0.99);
    }

    private static long max(List<Long> xs) {
        return quantile(xs, 1.0);
    }

    private static long quantile(List<Long> xs, double q) {
        if (xs.isEmpty()) {
            return -1;
        }
        List<Long> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.get(Math.min(s.size() - 1, (int) Math.ceil(q * s.size()) - 1 < 0 ? 0 : (int) Math.ceil(q * s.size()) - 1));
    }
}
