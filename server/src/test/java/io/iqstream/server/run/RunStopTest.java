package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code DELETE /v1/runs/{id}} on a running run stops it: the agent's request and every reader learn at once. */
class RunStopTest {
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String TEXT = "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m\",\"role\":\"assistant\"}";
    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    @Test
    void deleteOfARunningRunEndsItWithStoppedAndAnswersThePublisherAtOnce() throws Exception {
        try (TestServer server = TestServer.start("--run-idle-timeout", "60s")) {
            String admin = Tokens.admin();
            String auth = "Bearer " + admin;
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "stop-1", "application/x-ndjson", admin);
            pub.send(START + "\n" + TEXT + "\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/stop-1/events", "Authorization: " + auth)) {
                assertEquals(2, sub.take(2, 5000).size());
                HttpResponse<String> stop = Http.delete(server.base() + "/v1/runs/stop-1", "Authorization", auth);
                assertEquals(200, stop.statusCode(), stop.body());
                assertEquals("{\"runId\":\"stop-1\",\"stopped\":true,\"lastEventId\":3}", stop.body());

                // the reader gets the closing event, then a clean end
                SseClient.Event closing = sub.next(5000);
                assertEquals("3", closing.id());
                assertTrue(closing.data().startsWith("{\"type\":\"RUN_ERROR\",\"message\":\"run stopped\","
                        + "\"code\":\"STOPPED\""), closing.data());
                assertTrue(sub.awaitEnd(5000), "the stream ends after RUN_ERROR");
            }
            // the open publishing request is answered without sending anything more
            ChunkedPublisher.Reply answer = pub.readReply();
            assertEquals(409, answer.status(), answer.body());
            assertTrue(answer.body().startsWith("{\"error\":\"run_stopped\""), answer.body());
            assertTrue(answer.body().contains("\"runId\":\"stop-1\",\"lastEventId\":3"), answer.body());
            pub.close();

            // the stopped run is readable like any ended run
            HttpResponse<String> status = Http.get(server.base() + "/v1/runs/stop-1", "Authorization", auth);
            assertEquals(200, status.statusCode());
            assertTrue(status.body().contains("\"ended\":true,\"publishing\":false"), status.body());
            try (SseClient again = SseClient.open(server.port(), "/v1/runs/stop-1/events",
                    "Authorization: " + auth)) {
                List<SseClient.Event> all = again.take(3, 5000);
                assertTrue(all.get(2).data().contains("\"code\":\"STOPPED\""));
                assertTrue(again.awaitEnd(5000));
            }
            HttpResponse<String> late = Http.publish(server.base(), "stop-1", admin, FINISH);
            assertEquals(409, late.statusCode());
            assertTrue(late.body().contains("\"error\":\"run_ended\""), late.body());
            HttpResponse<String> metrics = Http.get(server.base() + "/metrics");
            assertTrue(metrics.body().contains("iqstream_runs_stopped_total 1"), metrics.body());
        }
    }

    @Test
    void deleteOfAnOpenRunWithoutAPublisherStopsIt() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            assertEquals(200, Http.publish(server.base(), "stop-2", admin, START).statusCode());
            HttpResponse<String> stop = Http.delete(server.base() + "/v1/runs/stop-2", "Authorization",
                    "Bearer " + admin);
            assertEquals(200, stop.statusCode());
            assertEquals("{\"runId\":\"stop-2\",\"stopped\":true,\"lastEventId\":2}", stop.body());
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/stop-2/events",
                    "Authorization: Bearer " + admin)) {
                assertTrue(sub.take(2, 5000).get(1).data().contains("\"code\":\"STOPPED\""));
                assertTrue(sub.awaitEnd(5000));
            }
        }
    }

    @Test
    void deleteOfAnEndedRunDropsIt() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "stop-3", admin, START, FINISH);
            String url = server.base() + "/v1/runs/stop-3";
            assertEquals(204, Http.delete(url, "Authorization", "Bearer " + admin).statusCode());
            assertEquals(410, Http.get(url, "Authorization", "Bearer " + admin).statusCode());
        }
    }

    @Test
    void ifRunningStopsARunningRunButNeverDropsAnEndedOne() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            String auth = "Bearer " + admin;
            Http.publish(server.base(), "stop-5", admin, START);
            String url = server.base() + "/v1/runs/stop-5?ifRunning=true";
            assertEquals(200, Http.delete(url, "Authorization", auth).statusCode());
            HttpResponse<String> again = Http.delete(url, "Authorization", auth);
            assertEquals(409, again.statusCode());
            assertTrue(again.body().contains("\"error\":\"run_ended\""), again.body());
            HttpResponse<String> status = Http.get(server.base() + "/v1/runs/stop-5", "Authorization", auth);
            assertEquals(200, status.statusCode(), "the ended run is kept");
        }
    }

    @Test
    void stoppingNeedsThePublishRight() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "stop-4", admin, START);
            String url = server.base() + "/v1/runs/stop-4";
            assertEquals(403, Http.delete(url, "Authorization", "Bearer " + Tokens.subscriber("*")).statusCode());
            HttpResponse<String> status = Http.get(url, "Authorization", "Bearer " + admin);
            assertTrue(status.body().contains("\"ended\":false"), status.body());
        }
    }
}
