package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.iqstream.server.worker.Workers;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Pipelined requests against the hand-off and the asynchronous answers (issue 31, items 1-3), on raw sockets to
 * the real server with two workers:
 * <ul>
 *   <li>a chunked publish pipelined behind requests that move the connection to another worker, its first read
 *       ending inside the publish's body (in a size line, in a chunk), is read whole: 200, never 400 on a valid
 *       body nor 500 with a stack trace;
 *   <li>a request pipelined behind a thread listing (answered when every worker has given its part) is answered
 *       after the listing, also when it says {@code Connection: close};
 *   <li>one caller listing in a loop on eight connections leaves another caller's listings answered 200.
 * </ul>
 */
class HostilePipeliningTest {
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);
    private static final String EVENT = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n";

    /** Two run ids, one on each worker: a status of both moves any connection once, wherever it was accepted. */
    private static String[] oneRunPerWorker(TestServer server) {
        Workers workers = server.server().context().workers();
        String[] ids = new String[2];
        for (int i = 0; ids[0] == null || ids[1] == null; i++) {
            String id = "w-" + i;
            ids[workers.ownerOf(id).index()] = id;
        }
        return ids;
    }

    private static String status(String runId, String token) {
        return "GET /v1/runs/" + runId + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\n\r\n";
    }

    @Test
    void aChunkedPublishPipelinedBehindAHandOffIsReadWhole() throws Exception {
        try (TestServer server = TestServer.start("--workers", "2")) {
            String token = Tokens.admin();
            String[] moving = oneRunPerWorker(server);
            byte[] data = EVENT.getBytes(StandardCharsets.UTF_8);
            String size = Integer.toHexString(data.length);
            List<String> wrong = new ArrayList<>();
            for (int attempt = 0; attempt < 6; attempt++) {
                String runId = "pipelined-" + attempt;
                String heads = status(moving[0], token) + status(moving[1], token)
                        + RawHttp.publishHead(runId, "application/x-ndjson", token);
                ByteArrayOutputStream whole = new ByteArrayOutputStream();
                whole.writeBytes(heads.getBytes(StandardCharsets.ISO_8859_1));
                whole.writeBytes((size + "\r\n").getBytes(StandardCharsets.US_ASCII));
                whole.writeBytes(data);
                whole.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] bytes = whole.toByteArray();
                // the first read ends in the size line (issue: 400 on a valid body) or inside the chunk (500)
                int cut = heads.length() + (attempt % 2 == 0 ? 1 : size.length() + 2 + 7);
                try (Socket s = RawHttp.connect(server.port())) {
                    s.getOutputStream().write(bytes, 0, cut);
                    s.getOutputStream().flush();
                    Thread.sleep(150);
                    s.getOutputStream().write(bytes, cut, bytes.length - cut);
                    s.getOutputStream().flush();
                    RawHttp.Responses answers = RawHttp.responses(s, 10_000);
                    for (int i = 0; i < 2; i++) {
                        RawHttp.Response st = answers.next();
                        assertEquals(404, st.status(), "status " + i + " of attempt " + attempt + ": " + st);
                    }
                    RawHttp.Response pub = answers.next();
                    if (pub.status() != 200) {
                        wrong.add("cut at " + cut + " (attempt " + attempt + "): " + pub.status() + " " + pub.text());
                    }
                }
            }
            assertEquals(List.of(), wrong, "publishes pipelined behind a hand-off not answered 200");
            assertEquals(0, server.server().context().metrics().refusals(io.iqstream.server.metrics.Refusal.INTERNAL_ERROR),
                    "no request answered 500 internal_error");
        }
    }

    @Test
    void aRequestPipelinedBehindAListingIsAnsweredAfterIt() throws Exception {
        try (TestServer server = TestServer.start("--workers", "2")) {
            String token = MINTER.mint(List.of("*"), List.of("*"), List.of("*"), Duration.ofHours(1));
            for (int i = 0; i < 4; i++) {
                RawHttp.Response r = RawHttp.exchange(server.port(), RawHttp.publish("listed-" + i,
                        "application/x-ndjson", token, EVENT.getBytes(StandardCharsets.UTF_8)), 10_000);
                assertEquals(200, r.status(), r.toString());
            }
            String listing = "GET /v1/threads/t/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                    + "\r\n\r\n";
            for (boolean close : new boolean[] {false, true}) {
                for (String second : List.of("GET /healthz HTTP/1.1\r\nHost: x\r\n",
                        "GET /v1/runs/listed-0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\n")) {
                    try (Socket s = RawHttp.connect(server.port())) {
                        RawHttp.write(s, listing + second + (close ? "Connection: close\r\n" : "") + "\r\n");
                        RawHttp.Responses answers = RawHttp.responses(s, 10_000);
                        RawHttp.Response first = answers.next();
                        assertEquals(200, first.status(), first.toString());
                        assertTrue(first.text().contains("\"threadId\":\"t\""),
                                "the listing's answer comes first (close: " + close + "): " + first);
                        RawHttp.Response then = answers.next();
                        assertEquals(200, then.status(), then.toString());
                        assertFalse(then.text().contains("\"threadId\""), "then the second request's: " + then);
                        if (close) {
                            assertTrue(RawHttp.awaitClosed(s, 10_000), "closed after the second answer");
                        }
                    }
                }
            }
            // listings pipelined on one connection queue behind each other: all answered, in order, none busy
            try (Socket s = RawHttp.connect(server.port())) {
                RawHttp.write(s, listing.repeat(6));
                RawHttp.Responses answers = RawHttp.responses(s, 10_000);
                for (int i = 0; i < 6; i++) {
                    RawHttp.Response r = answers.next();
                    assertEquals(200, r.status(), "pipelined listing " + i + ": " + r);
                }
            }
        }
    }

    @Test
    void oneCallerListingOnEightConnectionsLeavesOthersTheirListings() throws Exception {
        try (TestServer server = TestServer.start("--workers", "2")) {
            String attacker = MINTER.mint(List.of("atk.*"), List.of("atk.*"), List.of("t-atk"), Duration.ofHours(1));
            String honest = MINTER.mint(List.of("me.*"), List.of("me.*"), List.of("t-me"), Duration.ofHours(1));
            byte[] mine = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t-me\",\"runId\":\"r\"}\n"
                    .getBytes(StandardCharsets.UTF_8);
            assertEquals(200, RawHttp.exchange(server.port(), RawHttp.publish("me.1", "application/x-ndjson",
                    honest, mine), 10_000).status());
            // the attacker's thread is empty: each of its listings is a fast 404, so it asks as often as it can
            String attack = "GET /v1/threads/t-atk/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + attacker
                    + "\r\n\r\n";
            AtomicBoolean stop = new AtomicBoolean();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<Integer>> loops = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                loops.add(pool.submit(() -> {
                    int sent = 0;
                    try (Socket s = RawHttp.connect(server.port())) {
                        while (!stop.get()) {
                            // two pipelined at a time: they queue behind each other on the connection
                            RawHttp.write(s, attack + attack);
                            RawHttp.Responses answers = RawHttp.responses(s, 10_000);
                            answers.next();
                            answers.next();
                            sent += 2;
                        }
                    }
                    return sent;
                }));
            }
            int ok = 0;
            List<String> refused = new ArrayList<>();
            try {
                Thread.sleep(300);
                for (int i = 0; i < 30; i++) {
                    RawHttp.Response r = RawHttp.get(server.port(), "/v1/threads/t-me/runs",
                            "Authorization: Bearer " + honest);
                    if (r.status() == 200 && r.text().contains("\"runId\":\"me.1\"")) {
                        ok++;
                    } else {
                        refused.add(r.status() + " " + r.error());
                    }
                }
            } finally {
                stop.set(true);
                pool.shutdown();
            }
            int attacks = 0;
            for (Future<Integer> f : loops) {
                attacks += f.get();
            }
            assertTrue(attacks > 30, "the attacker kept listing: " + attacks);
            assertTrue(ok >= 29, "the honest caller's listings answered 200: " + ok + " of 30; " + refused);
        }
    }
}
