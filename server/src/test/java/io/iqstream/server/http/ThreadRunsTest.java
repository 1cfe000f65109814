package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.iqstream.server.worker.Workers;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/threads/{threadId}/runs} over real sockets: order across workers, state, rights, expiry. */
class ThreadRunsTest {
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);

    private static String start(String thread) {
        return "{\"type\":\"RUN_STARTED\",\"threadId\":\"" + thread + "\",\"runId\":\"r\"}";
    }

    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    /** May publish, read and list everything. */
    private static String all() {
        return MINTER.mint(List.of("*"), List.of("*"), List.of("*"), Duration.ofHours(1));
    }

    @Test
    void listsTheThreadsRunsOldestFirstFromEveryWorker() throws Exception {
        try (TestServer server = TestServer.start("--workers", "4")) {
            String token = all();
            Workers workers = server.server().context().workers();
            Set<Integer> used = new HashSet<>();
            String[] ids = {"c-9", "a-1", "b-7", "z-0", "m-3", "q-5"};
            for (String id : ids) {
                used.add(workers.ownerOf(id).index());
                assertEquals(200, Http.publish(server.base(), id, token, start("t-1"), FINISH).statusCode());
            }
            assertTrue(used.size() > 1, "the runs live on several workers: " + used);
            Http.publish(server.base(), "other", token, start("t-2"), FINISH);
            ChunkedPublisher live = ChunkedPublisher.open(server.port(), "live", "application/x-ndjson", token);
            live.send(start("t-1") + "\n{\"type\":\"STEP_STARTED\",\"stepName\":\"s\"}\n");
            HttpResponse<String> r = awaitRuns(server, "t-1", token, 7);
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().startsWith("{\"threadId\":\"t-1\",\"runs\":[{\"runId\":\"c-9\",\"running\":false,"
                    + "\"events\":2,\"startedAt\":"), r.body());
            List<String> order = runIds(r.body());
            assertEquals(List.of("c-9", "a-1", "b-7", "z-0", "m-3", "q-5", "live"), order, "publish order");
            assertTrue(r.body().endsWith("{\"runId\":\"live\",\"running\":true,\"events\":2,\"startedAt\":"
                    + startedAt(r.body(), "live") + ",\"endedAt\":null}],\"next\":null}"), r.body());
            assertTrue(r.body().matches(".*\"runId\":\"q-5\",\"running\":false,\"events\":2,\"startedAt\":\\d+,"
                    + "\"endedAt\":\\d+}.*"), r.body());
            live.send(FINISH + "\n");
            assertEquals(200, live.finish().status());
            live.close();
            HttpResponse<String> after = Http.get(server.base() + "/v1/threads/t-1/runs", "Authorization",
                    "Bearer " + token);
            assertTrue(after.body().contains("{\"runId\":\"live\",\"running\":false,\"events\":3,"), after.body());
            assertEquals(List.of("other"), runIds(Http.get(server.base() + "/v1/threads/t-2/runs",
                    "Authorization", "Bearer " + token).body()));
        }
    }

    /**
     * Runs started within one millisecond are still listed in the order they started: the ids run against their
     * order (r-999 first, r-600 last), so a tie broken by id would put them backwards. On the tree before start stamps
     * were microseconds, strictly increasing per node, the CI run of 2026-12-02 listed m-3 before z-0.
     */
    @Test
    void runsStartedInTheSameMillisecondKeepTheirStartOrder() throws Exception {
        try (TestServer server = TestServer.start("--workers", "4")) {
            String token = all();
            List<String> sent = new java.util.ArrayList<>();
            // one keep-alive socket, each publish answered before the next is sent: a few per millisecond
            try (io.iqstream.server.testing.RawHttp raw = new io.iqstream.server.testing.RawHttp(server.port())) {
                String body = start("burst") + "\n" + FINISH + "\n";
                for (int i = 0; i < 400; i++) {
                    String id = "r-" + (999 - i);
                    sent.add(id);
                    raw.send("POST /v1/runs/" + id + "/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + token + "\r\nContent-Type: application/x-ndjson\r\nContent-Length: "
                            + body.length() + "\r\n\r\n" + body);
                    assertEquals(200, raw.readReply().status(), id);
                }
            }
            HttpResponse<String> r = Http.get(server.base() + "/v1/threads/burst/runs?limit=1000",
                    "Authorization", "Bearer " + token);
            assertEquals(200, r.statusCode(), r.body());
            assertInOrder(sent, runIds(r.body()), "one page");
            // paged, the cursors walk the same order
            List<String> paged = new java.util.ArrayList<>();
            String next = null;
            do {
                HttpResponse<String> page = Http.get(server.base() + "/v1/threads/burst/runs?limit=70"
                        + (next == null ? "" : "&after=" + next), "Authorization", "Bearer " + token);
                assertEquals(200, page.statusCode(), page.body());
                paged.addAll(runIds(page.body()));
                Matcher m = Pattern.compile("\"next\":\"([^\"]+)\"").matcher(page.body());
                next = m.find() ? m.group(1) : null;
            } while (next != null);
            assertInOrder(sent, paged, "pages of 70");
        }
    }

    @Test
    void rightsAreCheckedBeforeNotFoundAndRunsTheTokenCannotReadAreLeftOut() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = all();
            Http.publish(server.base(), "mine-1", admin, start("shared"), FINISH);
            Http.publish(server.base(), "theirs-1", admin, start("shared"), FINISH);
            String url = server.base() + "/v1/threads/shared/runs";
            assertEquals(401, Http.get(url).statusCode());
            assertEquals(401, Http.get(server.base() + "/v1/threads/nobody/runs").statusCode());
            // a token without the threads right: 403, for a known thread and an unknown one alike
            HttpResponse<String> noRight = Http.get(url, "Authorization", "Bearer " + Tokens.admin());
            assertEquals(403, noRight.statusCode());
            assertTrue(noRight.body().contains("\"error\":\"forbidden\""), noRight.body());
            assertEquals(403, Http.get(server.base() + "/v1/threads/nobody/runs", "Authorization",
                    "Bearer " + Tokens.admin()).statusCode());
            String listOther = MINTER.mint(List.of(), List.of("*"), List.of("other-*"), Duration.ofHours(1));
            assertEquals(403, Http.get(url, "Authorization", "Bearer " + listOther).statusCode());
            // the right on the thread, but read rights on some of its runs only
            String partial = MINTER.mint(List.of(), List.of("mine-*"), List.of("shared"), Duration.ofHours(1));
            HttpResponse<String> mine = Http.get(url, "Authorization", "Bearer " + partial);
            assertEquals(List.of("mine-1"), runIds(mine.body()));
            String none = MINTER.mint(List.of(), List.of("x-*"), List.of("*"), Duration.ofHours(1));
            HttpResponse<String> hidden = Http.get(url, "Authorization", "Bearer " + none);
            assertEquals(404, hidden.statusCode(), "no readable run: as if the thread were unknown");
            HttpResponse<String> unknown = Http.get(server.base() + "/v1/threads/nobody/runs", "Authorization",
                    "Bearer " + admin);
            assertEquals(404, unknown.statusCode());
            assertTrue(unknown.body().contains("\"error\":\"not_found\""), unknown.body());
        }
    }

    @Test
    void malformedThreadRequestsAreRefused() throws Exception {
        try (TestServer server = TestServer.start()) {
            String auth = "Bearer " + all();
            assertEquals(400, Http.get(server.base() + "/v1/threads/a%01b/runs", "Authorization", auth)
                    .statusCode());
            try (io.iqstream.server.testing.RawHttp raw = new io.iqstream.server.testing.RawHttp(server.port())) {
                raw.send("GET /v1/threads/%zz/runs HTTP/1.1\r\nHost: x\r\nAuthorization: " + auth + "\r\n\r\n");
                assertEquals(400, raw.readReply().status());
            }
            assertEquals(404, Http.get(server.base() + "/v1/threads/t/other", "Authorization", auth).statusCode());
            assertEquals(404, Http.get(server.base() + "/v1/threads/t/x/runs", "Authorization", auth)
                    .statusCode());
            HttpResponse<String> post = Http.post(server.base() + "/v1/threads/t/runs", "application/json", "{}",
                    "Authorization", auth);
            assertEquals(405, post.statusCode());
            // an encoded thread id with characters a run id may not have
            Http.publish(server.base(), "enc-1", all(), start("user 7/chat é"), FINISH);
            HttpResponse<String> enc = Http.get(server.base() + "/v1/threads/user%207%2Fchat%20%C3%A9/runs",
                    "Authorization", auth);
            assertEquals(List.of("enc-1"), runIds(enc.body()), enc.body());
        }
    }

    @Test
    void runsLeaveTheIndexWhenTheyAreDropped() throws Exception {
        try (TestServer server = TestServer.start("--retention", "300ms")) {
            String token = all();
            Http.publish(server.base(), "gone-1", token, start("t-gone"), FINISH);
            String url = server.base() + "/v1/threads/t-gone/runs";
            assertEquals(200, Http.get(url, "Authorization", "Bearer " + token).statusCode());
            long deadline = System.nanoTime() + 30_000_000_000L; // liveness only
            int status = 200;
            while (status == 200 && System.nanoTime() < deadline) {
                Thread.sleep(20);
                status = Http.get(url, "Authorization", "Bearer " + token).statusCode();
            }
            assertEquals(404, status, "the run passed --retention and left its thread");
            Http.publish(server.base(), "gone-2", token, start("t-gone"));
            assertEquals(200, Http.delete(server.base() + "/v1/runs/gone-2", "Authorization", "Bearer " + token)
                    .statusCode(), "the running run is stopped");
            assertEquals(204, Http.delete(server.base() + "/v1/runs/gone-2", "Authorization", "Bearer " + token)
                    .statusCode(), "a second DELETE drops the stopped run");
            assertEquals(404, Http.get(url, "Authorization", "Bearer " + token).statusCode());
        }
    }

    /** Polls until the thread lists {@code count} runs (publishes answered; the index is updated on each worker). */
    private static HttpResponse<String> awaitRuns(TestServer server, String thread, String token, int count)
            throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L; // liveness only
        HttpResponse<String> r;
        do {
            r = Http.get(server.base() + "/v1/threads/" + thread + "/runs", "Authorization", "Bearer " + token);
            if (r.statusCode() == 200 && runIds(r.body()).size() == count) {
                return r;
            }
            Thread.sleep(10);
        } while (System.nanoTime() < deadline);
        return r;
    }

    /** The same runs in the same order; on failure, names the first run out of place rather than all 400. */
    private static void assertInOrder(List<String> expected, List<String> actual, String what) {
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
            if (!expected.get(i).equals(actual.get(i))) {
                throw new AssertionError(what + ": position " + i + " holds " + actual.get(i) + ", but "
                        + expected.get(i) + ", which started before it, is at " + actual.indexOf(expected.get(i))
                        + ": " + actual.subList(Math.max(0, i - 2), Math.min(actual.size(), i + 3)));
            }
        }
        assertEquals(expected.size(), actual.size(), what + ": runs listed");
    }

    private static List<String> runIds(String body) {
        Matcher m = Pattern.compile("\"runId\":\"([^\"]*)\"").matcher(body);
        java.util.ArrayList<String> out = new java.util.ArrayList<>();
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static String startedAt(String body, String runId) {
        Matcher m = Pattern.compile("\"runId\":\"" + runId + "\",[^}]*\"startedAt\":(\\d+)").matcher(body);
        assertTrue(m.find(), body);
        return m.group(1);
    }
}
