package io.iqstream.server.cluster;

import static io.iqstream.server.testing.DurableHttp.bearer;
import static io.iqstream.server.testing.DurableHttp.readAll;
import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Members named by host name, as a Kubernetes StatefulSet names its pods ({@code --advertise} a name, {@code
 * --peers} the names): each entry is one member, never resolved, so the nodes agree on who is who and a member whose
 * name has no address right now (a pod being replaced has no DNS record) is down, not gone — with streams on disk
 * nothing is created on a path it may hold.
 */
class ClusterPeerNamesTest {
    private static final String SECRET = "cluster-test-secret-0123456789abcdef0123";
    private static final String GONE = "iqstream-2.iqstream-nodes.invalid:8080";
    private final String token = Tokens.admin();

    private static TestServer node(int port, String peers, Path dir) {
        return TestServer.start("--port", String.valueOf(port), "--peers", peers, "--advertise", "localhost:" + port,
                "--cluster-secret", SECRET, "--durability", "disk", "--data-dir", dir.toString());
    }

    private static void awaitSettled(TestServer s, int live) throws InterruptedException {
        Membership m = s.server().context().cluster().membership();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!m.settled() || m.view().alive().size() != live) {
            assertTrue(System.nanoTime() < deadline, "membership did not settle: " + m.view());
            Thread.sleep(50); // polling a condition, bounded by the deadline above
        }
    }

    @Test
    void nodesNamedByNameFindEachOthersStreams(@TempDir Path dir) throws Exception {
        int a = Ports.free();
        int b = Ports.free();
        String peers = "localhost:" + a + ",localhost:" + b;
        try (TestServer na = node(a, peers, dir.resolve("a")); TestServer nb = node(b, peers, dir.resolve("b"))) {
            awaitSettled(na, 2);
            awaitSettled(nb, 2);
            Set<Member> both = Set.of(new Member("localhost", a), new Member("localhost", b));
            assertEquals(both, na.server().context().cluster().membership().view().alive());
            assertEquals(both, nb.server().context().cluster().membership().view().alive());
            for (int n = 0; n < 6; n++) { // paths owned by either node, each created and appended through the other
                String path = "/v1/stream/named/s" + n;
                TestServer first = n % 2 == 0 ? na : nb;
                TestServer other = n % 2 == 0 ? nb : na;
                assertEquals(201, send("PUT", first.base() + path, null, bearer(token, "Content-Type", "text/plain"))
                        .statusCode());
                assertEquals(204, send("POST", other.base() + path, "m" + n, bearer(token, "Content-Type",
                        "text/plain")).statusCode());
                assertEquals("m" + n, readAll(first.base() + path, bearer(token)));
                assertEquals("m" + n, readAll(other.base() + path, bearer(token)));
            }
        }
    }

    @Test
    void aMemberWhoseNameDoesNotResolveIsDownAndItsStreamsAreNotCreatedElsewhere(@TempDir Path dir)
            throws Exception {
        int a = Ports.free();
        try (TestServer na = node(a, "localhost:" + a + "," + GONE, dir)) {
            awaitSettled(na, 1);
            assertEquals(Set.of(Member.parse(GONE)), na.server().context().cluster().membership().view().down());
            for (String method : new String[] {"PUT", "GET", "HEAD"}) {
                HttpResponse<String> r = send(method, na.base() + "/v1/stream/named/maybe-on-the-gone-node", null,
                        bearer(token, "Content-Type", "text/plain"));
                assertEquals(503, r.statusCode(), method + " " + r.body());
                assertEquals("1", r.headers().firstValue("Retry-After").orElse(null), method);
            }
        }
    }
}
