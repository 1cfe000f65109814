package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.Ports;
import io.iqstream.server.testing.TestServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Cluster authorization with real rights (issue 31, item 4): every other cross-node test uses {@code *} tokens.
 * Two nodes, runs of one shared thread spread over both, tokens with part of the rights:
 * <ul>
 *   <li>a token for {@code mine-*} (and the thread) lists only its runs, through either node, whichever node
 *       holds them (the node asked filters its own part, each peer filters the page it gives, and the merge
 *       filters the peers' pages again);
 *   <li>a subscribe token for {@code a-*} reading or asking the status of a {@code b-*} run gets 403 through every
 *       node, also where the run lives on the other one (a relayed read is authorized with the client's token);
 *   <li>a request signed as a verified peer, carrying the partial token, is no more than that token: its listing
 *       is filtered and its read of a {@code b-*} run is 403 (a peer's signature proves the sender, not rights);
 *   <li>and a request pipelined behind a relayed one is answered after it.
 * </ul>
 */
class ClusterAuthorizationTest {
    private static final String SECRET = "cluster-authz-secret-0123456789abcdef0123";
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);
    private static final Pattern RUN_ID = Pattern.compile("\"runId\":\"([^\"]*)\"");

    @Test
    void partialRightsHoldThroughEveryNode() throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        try (TestServer a = node(pa, pb, pa); TestServer b = node(pa, pb, pb)) {
            awaitPair(a, b);
            String all = MINTER.mint(List.of("*"), List.of("*"), List.of("t-sh"), Duration.ofHours(1));
            // runs of each kind until each kind has one on each node (where a run lives follows its id)
            List<String> mine = new ArrayList<>();
            List<String> bRunsOn = new ArrayList<>(List.of("", ""));
            for (String kind : List.of("mine-", "a-", "b-")) {
                boolean[] on = new boolean[2];
                for (int i = 0; i < 40 && !(on[0] && on[1]); i++) {
                    String id = kind + i;
                    HttpResponse<String> r = Http.publish((i % 2 == 0 ? a : b).base(), id, all,
                            "{\"type\":\"RUN_STARTED\",\"threadId\":\"t-sh\",\"runId\":\"r\"}");
                    assertEquals(200, r.statusCode(), r.body());
                    int node = holds(a, id) ? 0 : 1;
                    on[node] = true;
                    if (kind.equals("mine-")) {
                        mine.add(id);
                    }
                    if (kind.equals("b-")) {
                        bRunsOn.set(node, id);
                    }
                }
                assertTrue(on[0] && on[1], kind + " runs on both nodes");
            }

            String partial = MINTER.mint(List.of("mine-*"), List.of("mine-*"), List.of("t-sh"), Duration.ofHours(1));
            for (TestServer s : List.of(a, b)) {
                HttpResponse<String> r = Http.get(s.base() + "/v1/threads/t-sh/runs", "Authorization",
                        "Bearer " + partial);
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(new TreeSet<>(mine), runIds(r.body()), "only its runs, through " + s.base());
            }

            String readerOfA = MINTER.mint(List.of(), List.of("a-*"), Duration.ofHours(1));
            for (TestServer s : List.of(a, b)) {
                for (String bRun : bRunsOn) {
                    HttpResponse<String> read = Http.get(s.base() + "/v1/runs/" + bRun + "/events?live=false",
                            "Authorization", "Bearer " + readerOfA);
                    assertEquals(403, read.statusCode(), bRun + " read through " + s.base() + ": " + read.body());
                    HttpResponse<String> status = Http.get(s.base() + "/v1/runs/" + bRun, "Authorization",
                            "Bearer " + readerOfA);
                    assertEquals(403, status.statusCode(), bRun + " status through " + s.base());
                }
                HttpResponse<String> own = Http.get(s.base() + "/v1/runs/a-0/events?live=false", "Authorization",
                        "Bearer " + readerOfA);
                assertEquals(200, own.statusCode(), "its own run through " + s.base() + ": " + own.body());
            }

            // a verified peer request is not all-seeing: signed by a, sent to b, with the partial tokens
            PeerAuth signer = new PeerAuth(SECRET, Member.parse("127.0.0.1:" + pa));
            Member to = Member.parse("127.0.0.1:" + pb);
            HttpResponse<String> listing = signed(signer, to, "/v1/threads/t-sh/runs", partial);
            assertEquals(200, listing.statusCode(), listing.body());
            assertTrue(mine.containsAll(runIds(listing.body())) && !runIds(listing.body()).isEmpty(),
                    "a peer's listing request lists only the token's runs: " + listing.body());
            HttpResponse<String> read = signed(signer, to, "/v1/runs/" + bRunsOn.get(1) + "/events?live=false",
                    readerOfA);
            assertEquals(403, read.statusCode(), "a peer's read with a token lacking the right: " + read.body());
        }
    }

    /**
     * A request pipelined behind one relayed to the other node (a status of a run held there) is answered after
     * it, also with {@code Connection: close} (issue 31, item 3: it used to close the connection, the relayed
     * answer lost).
     */
    @Test
    void aRequestPipelinedBehindARelayedOneIsAnsweredAfterIt() throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        try (TestServer a = node(pa, pb, pa); TestServer b = node(pa, pb, pb)) {
            awaitPair(a, b);
            String all = MINTER.mint(List.of("*"), List.of("*"), Duration.ofHours(1));
            String onB = null;
            for (int i = 0; i < 40 && onB == null; i++) {
                String id = "far-" + i;
                assertEquals(200, Http.publish(b.base(), id, all,
                        "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}").statusCode());
                onB = holds(b, id) ? id : null;
            }
            assertTrue(onB != null, "a run held on b");
            for (String close : List.of("", "Connection: close\r\n")) {
                try (java.net.Socket s = new java.net.Socket("127.0.0.1", pa)) {
                    s.setSoTimeout(10_000);
                    s.getOutputStream().write(("GET /v1/runs/" + onB + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + all + "\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n" + close + "\r\n")
                            .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
                    java.io.InputStream in = s.getInputStream();
                    StringBuilder got = new StringBuilder();
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    byte[] buf = new byte[8192];
                    while (System.nanoTime() < deadline && !(got.indexOf("\"runId\"") >= 0
                            && got.indexOf("\r\n\r\nok") >= 0)) {
                        int n;
                        try {
                            n = in.read(buf);
                        } catch (java.net.SocketTimeoutException e) {
                            break;
                        }
                        if (n < 0) {
                            break;
                        }
                        got.append(new String(buf, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1));
                    }
                    int status = got.indexOf("\"runId\":\"" + onB + "\"");
                    int health = got.indexOf("\r\n\r\nok");
                    assertTrue(status >= 0 && health > status, "the relayed status, then /healthz ("
                            + (close.isEmpty() ? "kept alive" : "close") + "): " + got);
                }
            }
        }
    }

    private static TestServer node(int pa, int pb, int self) {
        return TestServer.start("--port", String.valueOf(self), "--peers", "127.0.0.1:" + pa + ",127.0.0.1:" + pb,
                "--advertise", "127.0.0.1:" + self, "--cluster-secret", SECRET);
    }

    private static void awaitPair(TestServer a, TestServer b) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (TestServer s : List.of(a, b)) {
            while (Http.get(s.base() + "/readyz").statusCode() != 200
                    || s.server().context().cluster().membership().view().ready().size() < 2) {
                assertTrue(System.nanoTime() < deadline, "the nodes did not see each other within 30 s");
                Thread.sleep(20); // polling a condition, bounded by the deadline
            }
        }
    }

    private static boolean holds(TestServer s, String id) throws Exception {
        var owner = s.server().context().workers().ownerOf(id);
        return owner.loop().submit(() -> owner.registry().get(id) != null).get();
    }

    private static TreeSet<String> runIds(String body) {
        TreeSet<String> ids = new TreeSet<>();
        Matcher m = RUN_ID.matcher(body);
        while (m.find()) {
            ids.add(m.group(1));
        }
        return ids;
    }

    private static HttpResponse<String> signed(PeerAuth signer, Member to, String target, String token)
            throws Exception {
        PeerAuth.Signed s = signer.sign(to, "GET", target, System.currentTimeMillis());
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + to + target))
                .header(PeerAuth.HEADER, s.header()).header("Authorization", "Bearer " + token)
                .timeout(Duration.ofSeconds(10)).GET().build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    }
}
