package io.iqstream.server.cluster;

import static io.iqstream.server.testing.DurableHttp.bearer;
import static io.iqstream.server.testing.DurableHttp.readAll;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.LaunchedServer;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durable streams on disk in a cluster of three real nodes, each a process with a data directory of its own,
 * restarted one after another (SIGTERM: drain, exit; then started on the same port and directory) while producers append to a stream on every
 * node through every node: nothing acknowledged is lost, nothing is stored twice, and while a node is down its
 * streams answer {@code 503 peer_unavailable} through the others — never {@code 404}, and no other node creates them
 * again — and come back whole with it.
 */
class ClusterDurableRestartTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";
    private static final String TEXT = "text/plain";
    private static final Pattern MESSAGE = Pattern.compile("s(\\d+)-(\\d+);");
    private final String token = Tokens.admin();
    private final LaunchedServer[] nodes = new LaunchedServer[3];
    private final int[] ports = new int[3];
    private Path data;

    @AfterEach
    void stop() throws InterruptedException {
        for (LaunchedServer s : nodes) {
            if (s != null) {
                s.close();
            }
        }
    }

    private LaunchedServer start(int i) throws java.io.IOException {
        String peers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
        nodes[i] = LaunchedServer.start("--port", String.valueOf(ports[i]), "--peers", peers, "--advertise",
                "127.0.0.1:" + ports[i], "--cluster-secret", SECRET, "--durability", "disk", "--data-dir",
                data.resolve("node" + i).toString(), "--drain-timeout", "2s", "--memory-budget", "64m");
        return nodes[i];
    }

    /** Waits until every running node sees {@code alive} members live and ready (its /metrics). */
    private void awaitAll(int alive) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (LaunchedServer s : nodes) {
            if (s == null) {
                continue;
            }
            String m;
            while (!(m = send("GET", s.base() + "/metrics", null).body())
                    .contains("iqstream_cluster_members{state=\"live\"} " + alive + "\n")
                    || !m.contains("iqstream_cluster_members{state=\"ready\"} " + alive + "\n")) {
                assertTrue(System.nanoTime() < deadline, s.port() + " did not see " + alive + " members");
                Thread.sleep(50); // polling a condition, bounded by the deadline above
            }
        }
    }

    @Test
    void aRollingRestartLosesNothingAcknowledgedAndCreatesNothingTwice(@TempDir Path dir) throws Exception {
        data = dir;
        for (int i = 0; i < 3; i++) {
            ports[i] = Ports.free();
        }
        for (int i = 0; i < 3; i++) {
            start(i);
        }
        awaitAll(3);
        // a stream on each node: its path's rendezvous owner
        List<Member> members = List.of(new Member("127.0.0.1", ports[0]), new Member("127.0.0.1", ports[1]),
                new Member("127.0.0.1", ports[2]));
        String[] paths = new String[3];
        for (int i = 0; i < 3; i++) {
            for (int n = 0; paths[i] == null; n++) {
                String p = "/v1/stream/roll/s" + i + "-" + n;
                if (Rendezvous.owner(p, members).equals(members.get(i))) {
                    paths[i] = p;
                }
            }
            assertEquals(201, send("PUT", nodes[(i + 1) % 3].base() + paths[i], null,
                    bearer(token, "Content-Type", TEXT)).statusCode());
        }
        ConcurrentHashMap<Integer, Long> acked = new ConcurrentHashMap<>();
        ConcurrentHashMap<Integer, String> wrong = new ConcurrentHashMap<>();
        ConcurrentHashMap<Integer, String> last = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger unavailable = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            int me = w;
            writers.add(Thread.ofPlatform().start(() -> {
                long seq = 0;
                int via = me;
                while (!stop.get()) {
                    via = (via + 1) % 3;
                    LaunchedServer node = nodes[via];
                    try {
                        HttpResponse<String> r = send("POST", node.base() + paths[me], "s" + me + "-" + seq + ";",
                                bearer(token, "Content-Type", TEXT, "Producer-Id", "p" + me, "Producer-Epoch", "0",
                                        "Producer-Seq", Long.toString(seq)));
                        if (r.statusCode() == 200 || r.statusCode() == 204) {
                            acked.put(me, seq); // 204: a retry of a seq stored before its answer was lost
                            seq++;
                        } else if (r.statusCode() == 503) {
                            unavailable.incrementAndGet(); // the node or the stream's holder is down: retry
                            last.put(me, "503 via " + node.port() + ": " + r.body());
                        } else {
                            wrong.put(me, "seq " + seq + " via " + node.port() + ": " + r.statusCode() + " "
                                    + r.body());
                            return;
                        }
                    } catch (Exception e) {
                        // the node asked is the one restarting: the next request goes to another
                        last.put(me, e.toString());
                    }
                }
            }));
        }
        for (int i = 0; i < 3; i++) {
            long before = acked.values().stream().mapToLong(Long::longValue).sum();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (acked.values().stream().mapToLong(Long::longValue).sum() < before + 30) {
                assertTrue(System.nanoTime() < deadline && wrong.isEmpty(), "appends go on: " + acked + wrong + last);
                Thread.sleep(20); // polling the writers' progress, bounded by the deadline
            }
            nodes[i].close();
            nodes[i] = null;
            awaitAll(2);
            // its stream, through another node: 503 while it is down, never 404, never created again elsewhere
            LaunchedServer other = nodes[(i + 1) % 3];
            HttpResponse<String> read = send("GET", other.base() + paths[i] + "?offset=-1", null, bearer(token));
            assertEquals(503, read.statusCode(), "a stream of a node that is down: " + read.body());
            HttpResponse<String> put = send("PUT", other.base() + paths[i], null, bearer(token, "Content-Type", TEXT));
            assertEquals(503, put.statusCode(), "no second copy of a stream whose holder may come back");
            start(i);
            awaitAll(3);
        }
        long deadline = System.nanoTime() + 20_000_000_000L;
        long target = acked.values().stream().mapToLong(Long::longValue).sum() + 30;
        while (acked.values().stream().mapToLong(Long::longValue).sum() < target) {
            assertTrue(System.nanoTime() < deadline && wrong.isEmpty(), "appends go on after: " + acked + wrong + last);
            Thread.sleep(20); // polling the writers' progress, bounded by the deadline
        }
        stop.set(true);
        for (Thread t : writers) {
            t.join(30_000);
        }
        assertTrue(wrong.isEmpty(), "only 200, 204 or 503: " + wrong);
        for (int w = 0; w < 3; w++) {
            for (LaunchedServer via : nodes) {
                String body = readAll(via.base() + paths[w], bearer(token));
                Matcher m = MESSAGE.matcher(body);
                long expected = 0;
                int end = 0;
                while (m.find()) {
                    assertEquals(end, m.start(), "whole messages only");
                    assertEquals(w, Integer.parseInt(m.group(1)));
                    assertEquals(expected, Long.parseLong(m.group(2)), "each seq once, in order, no hole");
                    expected++;
                    end = m.end();
                }
                assertEquals(body.length(), end);
                assertEquals(acked.get(w) + 1, expected, "stream " + w + " through " + via.port()
                        + ": every acknowledged append and nothing else");
            }
        }
        // one copy of each: the node that holds it has it, every other node has none of its own (their metrics)
        for (LaunchedServer node : nodes) {
            String m = send("GET", node.base() + "/metrics", null).body();
            assertTrue(m.contains("\niqstream_durable_streams_active 1\n"), node.port() + " holds one stream: " + m);
        }
        assertTrue(unavailable.get() > 0, "the writers met a node that was down (503) and went on");
    }

}
