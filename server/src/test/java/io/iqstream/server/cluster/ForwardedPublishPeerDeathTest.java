package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.metrics.ClusterMetrics;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A publish relayed to the node that holds its run, whose node dies (closes) while the body streams: the relaying
 * node cuts the client's connection (what the peer took is unknown), counts a broken relay, and releases every
 * chunk that still arrives (leak detection is paranoid in tests; {@code LeakCheckExtension} fails this class).
 */
class ForwardedPublishPeerDeathTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";
    private static final String EVENT = "{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":\"" + "x".repeat(200) + "\"}\n";


    private static String chunk(String text) {
        return Integer.toHexString(text.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + text + "\r\n";
    }

    @Test
    void aRelayedPublishWhosePeerDiesIsCutAndItsBodyReleased() throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
        try (TestServer a = TestServer.start("--port", String.valueOf(pa), "--peers", peers, "--advertise",
                "127.0.0.1:" + pa, "--cluster-secret", SECRET)) {
            TestServer b = TestServer.start("--port", String.valueOf(pb), "--peers", peers, "--advertise",
                    "127.0.0.1:" + pb, "--cluster-secret", SECRET);
            try {
                long deadline = System.nanoTime() + 30_000_000_000L;
                for (TestServer s : List.of(a, b)) {
                    while (s.server().context().cluster().membership().view().ready().size() < 2) {
                        assertTrue(System.nanoTime() < deadline, "the nodes did not see each other within 30 s");
                        Thread.sleep(50); // polling a condition, bounded by the deadline above
                    }
                }
                Member memberB = new Member("127.0.0.1", pb);
                List<Member> ready = a.server().context().cluster().membership().view().ready();
                String run = null;
                for (int i = 0; run == null; i++) {
                    if (Rendezvous.owner("dies-" + i, ready).equals(memberB)) {
                        run = "dies-" + i;
                    }
                }
                ClusterMetrics m = a.server().context().metrics().cluster;
                long broken = m.failureCount(ClusterMetrics.Failure.BROKEN);
                try (Socket s = new Socket("127.0.0.1", pa)) {
                    s.setSoTimeout(15_000);
                    OutputStream out = s.getOutputStream();
                    out.write(("POST /v1/runs/" + run + "/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + Tokens.admin() + "\r\nContent-Type: application/x-ndjson\r\n"
                            + "Transfer-Encoding: chunked\r\n\r\n" + chunk(EVENT) + chunk(EVENT))
                            .getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    long until = System.nanoTime() + 15_000_000_000L;
                    while (!holds(b, run)) {
                        assertTrue(System.nanoTime() < until, "the run reached B within 15 s");
                        Thread.sleep(20); // polling a condition, bounded by the deadline
                    }
                    b.close(); // B dies with the body still streaming through A
                    boolean cut = false;
                    try {
                        for (int i = 0; i < 2000; i++) {
                            out.write(chunk(EVENT).getBytes(StandardCharsets.UTF_8));
                        }
                        InputStream in = s.getInputStream();
                        cut = in.read() < 0 || in.read() < 0;
                    } catch (IOException e) {
                        cut = true; // reset by A
                    }
                    assertTrue(cut, "A cut the client's connection");
                }
                assertTrue(m.failureCount(ClusterMetrics.Failure.BROKEN) > broken, "a broken relay is counted");
            } finally {
                b.close();
            }
        }
    }

    private static boolean holds(TestServer s, String runId) {
        var owner = s.server().context().workers().ownerOf(runId);
        return owner.loop().submit(() -> owner.registry().get(runId) != null).syncUninterruptibly().getNow();
    }
}
