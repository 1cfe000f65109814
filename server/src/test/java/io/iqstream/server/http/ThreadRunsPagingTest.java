package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Pages of {@code GET /v1/threads/{id}/runs}: {@code limit}, the {@code next} cursor, and their refusals. */
class ThreadRunsPagingTest {
    private static final TokenMinter MINTER = new TokenMinter(TestServer.SECRET);
    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    private static String start(String thread) {
        return "{\"type\":\"RUN_STARTED\",\"threadId\":\"" + thread + "\",\"runId\":\"r\"}";
    }

    @Test
    void pagesFollowTheirCursorOverEveryWorkerAndLeaveOutRunsTheTokenCannotRead() throws Exception {
        try (TestServer server = TestServer.start("--workers", "3")) {
            String all = MINTER.mint(List.of("*"), List.of("*"), List.of("*"), Duration.ofHours(1));
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                String id = "page-" + i;
                assertEquals(200, Http.publish(server.base(), id, all, start("t-page"), FINISH).statusCode());
                expected.add(id);
                assertEquals(200, Http.publish(server.base(), "hidden-" + i, all, start("t-page"), FINISH)
                        .statusCode());
            }
            // reads page-* only: the hidden runs never take a place in a page
            String reader = MINTER.mint(List.of(), List.of("page-*"), List.of("t-page"), Duration.ofHours(1));
            List<String> listed = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            String after = null;
            do {
                HttpResponse<String> r = Http.get(server.base() + "/v1/threads/t-page/runs?limit=3"
                        + (after == null ? "" : "&after=" + after), "Authorization", "Bearer " + reader);
                assertEquals(200, r.statusCode(), r.body());
                List<String> ids = runIds(r.body());
                sizes.add(ids.size());
                listed.addAll(ids);
                Matcher next = Pattern.compile("\"next\":(null|\"([^\"]*)\")}$").matcher(r.body());
                assertTrue(next.find(), r.body());
                after = next.group(2);
            } while (after != null && sizes.size() < 10);
            assertEquals(expected, listed, "oldest first, each once");
            assertEquals(List.of(3, 3, 1), sizes);
        }
    }

    @Test
    void aBadLimitOrCursorIs400() throws Exception {
        try (TestServer server = TestServer.start()) {
            String all = MINTER.mint(List.of("*"), List.of("*"), List.of("*"), Duration.ofHours(1));
            Http.publish(server.base(), "one", all, start("t-bad"), FINISH);
            for (String q : new String[] {"limit=0", "limit=1001", "limit=ten", "limit=", "after=%21%21",
                    "after=bm9kb3Q"}) {
                HttpResponse<String> r = Http.get(server.base() + "/v1/threads/t-bad/runs?" + q,
                        "Authorization", "Bearer " + all);
                assertEquals(400, r.statusCode(), q + ": " + r.body());
                assertTrue(r.body().contains("\"error\":\"bad_request\""), r.body());
            }
            HttpResponse<String> r = Http.get(server.base() + "/v1/threads/t-bad/runs?limit=1000",
                    "Authorization", "Bearer " + all);
            assertEquals(List.of("one"), runIds(r.body()));
        }
    }

    private static List<String> runIds(String body) {
        Matcher m = Pattern.compile("\"runId\":\"([^\"]*)\"").matcher(body);
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }
}
