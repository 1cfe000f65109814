package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** With --peers a thread listing covers the cluster: every node lists the runs of every node, paged. */
class ClusterThreadListingTest {
    private static final String SECRET = "cluster-listing-secret-0123456789abcdef01";
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);


    @Test
    void everyNodeListsTheRunsHeldOnEveryNodeOnePageAtATime() throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
        try (TestServer a = TestServer.start("--port", String.valueOf(pa), "--peers", peers, "--advertise",
                "127.0.0.1:" + pa, "--cluster-secret", SECRET);
                TestServer b = TestServer.start("--port", String.valueOf(pb), "--peers", peers, "--advertise",
                        "127.0.0.1:" + pb, "--cluster-secret", SECRET)) {
            long deadline = System.nanoTime() + 30_000_000_000L;
            for (TestServer s : List.of(a, b)) {
                while (Http.get(s.base() + "/readyz").statusCode() != 200
                        || s.server().context().cluster().membership().view().ready().size() < 2) {
                    assertTrue(System.nanoTime() < deadline, "the nodes did not see each other within 30 s");
                    Thread.sleep(20); // polling a condition, bounded by the deadline
                }
            }
            String token = MINTER.mint(List.of("*"), List.of("*"), List.of("t-cl"), Duration.ofHours(1));
            List<String> published = new ArrayList<>();
            int onA = 0;
            for (int i = 0; i < 10; i++) {
                String id = "cl-" + i;
                HttpResponse<String> r = Http.publish((i % 2 == 0 ? a : b).base(), id, token,
                        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t-cl\",\"runId\":\"r\"}",
                        "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t-cl\",\"runId\":\"r\"}");
                assertEquals(200, r.statusCode(), r.body());
                published.add(id);
                onA += a.server().context().workers().ownerOf(id).loop().submit(() -> a.server().context()
                        .workers().ownerOf(id).registry().get(id) != null).get() ? 1 : 0;
            }
            assertTrue(onA > 0 && onA < 10, "the runs are spread over both nodes: " + onA + " on a");
            for (TestServer s : List.of(a, b)) {
                List<String> listed = new ArrayList<>();
                String after = null;
                int pages = 0;
                do {
                    HttpResponse<String> r = Http.get(s.base() + "/v1/threads/t-cl/runs?limit=4"
                            + (after == null ? "" : "&after=" + after), "Authorization", "Bearer " + token);
                    assertEquals(200, r.statusCode(), r.body());
                    Matcher m = Pattern.compile("\"runId\":\"([^\"]*)\"").matcher(r.body());
                    while (m.find()) {
                        listed.add(m.group(1));
                    }
                    Matcher next = Pattern.compile("\"next\":(null|\"([^\"]*)\")").matcher(r.body());
                    assertTrue(next.find(), r.body());
                    after = next.group(2);
                    pages++;
                } while (after != null && pages < 10);
                assertEquals(published, listed, "every run of the thread, from every node, oldest first, once");
            }
        }
    }
}
