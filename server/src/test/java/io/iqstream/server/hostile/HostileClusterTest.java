package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The cluster against a stranger on the node network and a client who means harm (issue 23, items 2, 4, 5 and 6):
 * real nodes in their own JVMs with {@code --peers}, each started the way the launcher starts it.
 */
class HostileClusterTest {
    private static final String SECRET = "hostile-cluster-secret-0123456789abcdef";
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    /** A plain HTTP server that says yes to everything: ready, and holding every run it is asked about. */
    private static final class Impostor implements AutoCloseable {
        final HttpServer http;
        final AtomicInteger requests = new AtomicInteger();
        final AtomicInteger withCredentials = new AtomicInteger();

        Impostor() throws IOException {
            http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            http.createContext("/", exchange -> {
                requests.incrementAndGet();
                if (exchange.getRequestHeaders().containsKey("Authorization")
                        || exchange.getRequestURI().getRawQuery() != null
                        && exchange.getRequestURI().getRawQuery().contains("access_token")) {
                    withCredentials.incrementAndGet();
                }
                exchange.getRequestBody().readAllBytes();
                byte[] body = (exchange.getRequestURI().getPath().equals("/readyz") ? "ready\n" : "{\"held\":true}")
                        .getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            http.start();
        }

        String hostPort() {
            return "127.0.0.1:" + http.getAddress().getPort();
        }

        @Override
        public void close() {
            http.stop(0);
        }
    }


    private static List<HostileServer> startNodes(int[] ports, String peers) throws IOException {
        List<HostileServer> nodes = new ArrayList<>();
        for (int p : ports) {
            nodes.add(HostileServer.start("--port", String.valueOf(p), "--peers", peers, "--advertise",
                    "127.0.0.1:" + p, "--cluster-secret", SECRET, "--await-run", "2s", "--workers", "1"));
        }
        return nodes;
    }

    private static void awaitReady(HostileServer node) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (RawHttp.get(node.port(), "/readyz").status() != 200) {
            assertTrue(System.nanoTime() < deadline, "/readyz not 200 within 60 s");
            Thread.sleep(5); // polling a condition, bounded by the deadline
        }
    }

    private static RawHttp.Response publish(HostileServer node, String runId, String token) throws IOException {
        byte[] body = (START + "\n" + FINISH + "\n").getBytes(StandardCharsets.UTF_8);
        return RawHttp.exchange(node.port(), RawHttp.publish(runId, "application/x-ndjson", token, body), 10_000);
    }

    private static void closeAll(List<HostileServer> nodes) throws InterruptedException {
        AssertionError first = null;
        for (HostileServer n : nodes) {
            try {
                n.close();
            } catch (AssertionError e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Test
    void aServerWithoutTheSecretInThePeerListIsNeverAMemberAndGetsNothingAClientSent() throws Exception {
        try (Impostor impostor = new Impostor()) {
            int[] ports = {Ports.free(), Ports.free()};
            String peers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + "," + impostor.hostPort();
            List<HostileServer> nodes = startNodes(ports, peers);
            try {
                for (HostileServer n : nodes) {
                    awaitReady(n);
                }
                String admin = Tokens.admin();
                for (int i = 0; i < 12; i++) {
                    HostileServer via = nodes.get(i % 2);
                    RawHttp.Response r = publish(via, "imp-" + i, admin);
                    assertEquals(200, r.status(), r.text());
                    RawHttp.Response status = RawHttp.get(nodes.get((i + 1) % 2).port(), "/v1/runs/imp-" + i,
                            "Authorization: Bearer " + admin);
                    assertEquals(200, status.status(), "every run is held by a real node: " + status.text());
                    assertTrue(status.text().contains("\"events\":2"), status.text());
                }
                assertEquals(0, impostor.withCredentials.get(), "nothing a client sent reached the stranger");
                assertTrue(impostor.requests.get() > 0, "the stranger was probed");
                for (HostileServer n : nodes) {
                    // a node that started first saw the other refuse its first probe: wait until both see both
                    long deadline = System.nanoTime() + 20_000_000_000L;
                    long ready;
                    while ((ready = n.metric("iqstream_cluster_members{state=\"ready\"}")) != 2
                            && System.nanoTime() < deadline) {
                        Thread.sleep(50); // polling a condition, bounded by the deadline
                    }
                    assertEquals(2, ready, "ready members: the two real nodes, never the stranger");
                    assertTrue(n.metric("iqstream_cluster_forward_failures_total{reason=\"unproven\"}") >= 1);
                    n.assertSound();
                }
                // a peer header that does not verify is refused, never relayed on (no A -> B -> A loop)
                RawHttp.Response forged = RawHttp.get(nodes.get(0).port(), "/v1/runs/imp-0",
                        "Authorization: Bearer " + admin, "X-IQStream-Peer: 1;" + impostor.hostPort() + ";"
                                + System.currentTimeMillis() + ";00-1;" + "00".repeat(32));
                assertEquals(403, forged.status(), forged.text());
                assertEquals("peer_unproven", forged.error());
            } finally {
                closeAll(nodes);
            }
        }
    }

    @Test
    void readyMeansServingAndATargetThePeerParserTakesIsNeverA500NorLogsItsToken() throws Exception {
        int[] ports = {Ports.free(), Ports.free(), Ports.free()};
        String peers = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
        List<HostileServer> nodes = startNodes(ports, peers);
        try {
            String admin = Tokens.admin();
            // wait for /readyz alone, then publish at once on every node: ready is serving
            for (int n = nodes.size() - 1; n >= 0; n--) {
                awaitReady(nodes.get(n));
                for (int i = 0; i < 6; i++) {
                    RawHttp.Response r = publish(nodes.get(n), "rz-" + n + "-" + i, admin);
                    assertEquals(200, r.status(), "node " + n + " said ready: " + r.text());
                }
            }
            // the joiner looks runs up at their earlier owners; a query with characters java.net.URI refuses
            // (printable, taken by the request parser) is relayed, not a 500, and its token is not logged
            String query = "access_token=" + admin + "&x=a|b{c}%22d<e>f\\g^h`i";
            int answered = 0;
            for (HostileServer node : nodes) {
                for (int i = 0; i < 20; i++) {
                    RawHttp.Response r = RawHttp.get(node.port(), "/v1/runs/q-" + i + "?" + query.replace("%22", "\""));
                    assertNotEquals(500, r.status(), r.text());
                    assertTrue(r.status() == 404 || r.status() == 200, r.status() + " " + r.text());
                    answered++;
                }
                node.assertSound();
            }
            assertEquals(60, answered);
        } finally {
            closeAll(nodes);
        }
    }
}
