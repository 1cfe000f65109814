package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code ?live=false}: a read of what a run holds now, that ends at its tail instead of following it. */
class TailReadTest {
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    private static String event(int i) {
        return "{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":" + i + "}";
    }

    @Test
    void aTailReadOfAnOpenRunEndsAfterItsLastEvent() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "tail-open", admin, START, event(2), event(3));
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/tail-open/events?live=false",
                    "Authorization: Bearer " + admin)) {
                assertEquals(200, sub.status());
                List<SseClient.Event> events = sub.take(3, 10_000);
                SseClient.assertConsecutive(events, 1);
                assertTrue(sub.awaitEnd(10_000), "the response ends although the run is open");
                assertEquals(0, sub.pending());
            }
            HttpResponse<String> status = Http.get(server.base() + "/v1/runs/tail-open",
                    "Authorization", "Bearer " + admin);
            assertTrue(status.body().contains("\"ended\":false"), status.body());
        }
    }

    @Test
    void aTailReadResumesAfterLastEventIdAndIsEmptyAtTheTail() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "tail-resume", admin, START, event(2), event(3));
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/tail-resume/events?live=false",
                    "Authorization: Bearer " + admin, "Last-Event-ID: 1")) {
                SseClient.assertConsecutive(sub.take(2, 10_000), 2);
                assertTrue(sub.awaitEnd(10_000));
            }
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/tail-resume/events?live=false&lastEventId=3",
                    "Authorization: Bearer " + admin)) {
                assertEquals(200, sub.status());
                assertTrue(sub.awaitEnd(10_000), "nothing after 3 yet: an empty stream, ended");
                assertEquals(0, sub.pending());
            }
        }
    }

    @Test
    void aTailReadOfAnUnknownRunIs404WithoutAwaitingIt() throws Exception {
        try (TestServer server = TestServer.start("--await-run", "120s")) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(server.base() + "/v1/runs/nobody/events?live=false"))
                    .header("Authorization", "Bearer " + Tokens.admin()).timeout(Duration.ofSeconds(30)).build();
            HttpResponse<String> r = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
            assertEquals(404, r.statusCode(), "answered before --await-run (120 s): " + r.body());
        }
    }

    @Test
    void liveTakesOnlyTrueOrFalse() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "tail-bad", admin, START);
            HttpResponse<String> r = Http.get(server.base() + "/v1/runs/tail-bad/events?live=no",
                    "Authorization", "Bearer " + admin);
            assertEquals(400, r.statusCode());
            assertTrue(r.body().contains("live must be true or false"), r.body());
        }
    }
}
