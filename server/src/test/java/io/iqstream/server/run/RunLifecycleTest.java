package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Timeouts and retention, with the durations shortened by flags. */
class RunLifecycleTest {
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    @Test
    void brokenPublisherEndsTheRunWithPublisherLost() throws Exception {
        try (TestServer server = TestServer.start("--publisher-timeout", "300ms")) {
            String admin = Tokens.admin();
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "lost", "application/x-ndjson", admin);
            pub.send(START + "\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/lost/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals("1", sub.next(5000).id());
                pub.breakOff();
                SseClient.Event error = sub.next(5000);
                assertEquals("2", error.id());
                assertTrue(error.data().startsWith("{\"type\":\"RUN_ERROR\",\"message\":\"publisher disconnected\","
                        + "\"code\":\"PUBLISHER_LOST\""), error.data());
                assertTrue(sub.awaitEnd(5000));
            }
        }
    }

    @Test
    void publisherReturningInTimeContinuesTheRun() throws Exception {
        try (TestServer server = TestServer.start("--publisher-timeout", "2s")) {
            String admin = Tokens.admin();
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "back", "application/x-ndjson", admin);
            pub.send(START + "\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/back/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals("1", sub.next(5000).id(), "the first event is in before the break");
            }
            pub.breakOff();
            // the new publisher comes once the server has seen the old one go (else it is the second of two)
            var metrics = server.server().context().metrics();
            Conditions.await("the server sees the publisher gone", 5000, () -> metrics.publishersActive.sum() == 0);
            HttpResponse<String> r = Http.publish(server.base(), "back", admin, FINISH);
            assertEquals("{\"runId\":\"back\",\"lastEventId\":2,\"ended\":true}", r.body());
        }
    }

    @Test
    void openRunWithoutPublisherIsEndedAfterIdleTimeout() throws Exception {
        try (TestServer server = TestServer.start("--run-idle-timeout", "300ms")) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "idle", admin, START);
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/idle/events",
                    "Authorization: Bearer " + admin)) {
                List<SseClient.Event> events = sub.take(2, 5000);
                assertTrue(events.get(1).data().contains("\"code\":\"RUN_IDLE\""), events.get(1).data());
            }
        }
    }

    @Test
    void endedRunIsReadableForRetentionThenGoneThenNotFound() throws Exception {
        // the tombstone lasts long enough for the 410 and the refused republish to be seen inside it on a busy
        // machine; the deadlines are liveness bounds only
        try (TestServer server = TestServer.start("--retention", "400ms", "--tombstone", "5s",
                "--await-run", "0ms")) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "ret", admin, START, FINISH);
            String url = server.base() + "/v1/runs/ret";
            assertEquals(200, Http.get(url, "Authorization", "Bearer " + admin).statusCode());
            long deadline = System.nanoTime() + 30_000_000_000L;
            int status = 200;
            while (status == 200 && System.nanoTime() < deadline) {
                Thread.sleep(20);
                status = Http.get(url, "Authorization", "Bearer " + admin).statusCode();
            }
            assertEquals(410, status, "expired run answers 410");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/ret/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals(410, sub.status());
                assertTrue(sub.body().contains("\"error\":\"gone\""));
            }
            HttpResponse<String> republish = Http.publish(server.base(), "ret", admin, START);
            assertEquals(409, republish.statusCode(), "an expired id is not reused while tombstoned");
            while (status == 410 && System.nanoTime() < deadline + 30_000_000_000L) {
                Thread.sleep(20);
                status = Http.get(url, "Authorization", "Bearer " + admin).statusCode();
            }
            assertEquals(404, status, "after the tombstone, 404");
        }
    }

    @Test
    void deleteEndsStreamsAndFreesTheRun() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "del", admin, START);
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/del/events",
                    "Authorization: Bearer " + admin)) {
                sub.next(5000);
                // a running run is stopped (RUN_ERROR STOPPED, kept for --retention); the second DELETE drops it
                assertEquals(200, Http.delete(server.base() + "/v1/runs/del", "Authorization", "Bearer " + admin)
                        .statusCode());
                assertTrue(sub.awaitEnd(5000), "the open stream ends");
            }
            assertEquals(204, Http.delete(server.base() + "/v1/runs/del", "Authorization", "Bearer " + admin)
                    .statusCode());
            assertEquals(410, Http.get(server.base() + "/v1/runs/del", "Authorization", "Bearer " + admin)
                    .statusCode());
            var budget = server.server().context().budget();
            assertTrue(budget.tombstoneBytes() > 0, "the id's tombstone is charged");
            assertEquals(budget.tombstoneBytes(), budget.committedBytes(), "the run's memory given back");
        }
    }
}
