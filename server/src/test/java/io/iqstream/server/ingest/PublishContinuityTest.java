package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code Last-Event-ID} on a publishing request: the publisher's belief of the run's last id is checked. */
class PublishContinuityTest {
    static TestServer server;
    static String admin;

    @BeforeAll
    static void start() {
        server = TestServer.start();
        admin = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private HttpResponse<String> publish(String runId, String lastEventId, String body) throws Exception {
        String url = server.base() + "/v1/runs/" + runId + "/events";
        return lastEventId == null
                ? Http.post(url, "application/x-ndjson", body, "Authorization", "Bearer " + admin)
                : Http.post(url, "application/x-ndjson", body, "Authorization", "Bearer " + admin,
                        "Last-Event-ID", lastEventId);
    }

    private static String events(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"d").append(i).append("\"}\n");
        }
        return sb.toString();
    }

    @Test
    void appendsWhenTheBeliefMatches() throws Exception {
        assertEquals(200, publish("cont-ok", "0", events(2)).statusCode());
        HttpResponse<String> r = publish("cont-ok", "2", events(3));
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"runId\":\"cont-ok\",\"lastEventId\":5,\"ended\":false}", r.body());
    }

    @Test
    void differentCountIs409EventIdMismatchWithTheActualId() throws Exception {
        assertEquals(200, publish("cont-mm", null, events(4)).statusCode());
        HttpResponse<String> r = publish("cont-mm", "2", events(1));
        assertEquals(409, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"event_id_mismatch\"") && r.body().contains("\"lastEventId\":4"),
                r.body());
        HttpResponse<String> ahead = publish("cont-mm", "9", events(1));
        assertEquals(409, ahead.statusCode());
        assertTrue(ahead.body().contains("\"lastEventId\":4"), ahead.body());
        // nothing was appended by the refused requests
        assertEquals(200, publish("cont-mm", "4", events(1)).statusCode());
    }

    @Test
    void noRunWhileTheHeaderSaysNIsRunLostNeverAFreshRun() throws Exception {
        HttpResponse<String> r = publish("cont-lost", "7", events(1));
        assertEquals(409, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"run_lost\"") && r.body().contains("\"runId\":\"cont-lost\""),
                r.body());
        HttpResponse<String> status = Http.get(server.base() + "/v1/runs/cont-lost", "Authorization",
                "Bearer " + admin);
        assertEquals(404, status.statusCode(), "no run was created: " + status.body());
    }

    @Test
    void zeroOnANewRunCreatesIt() throws Exception {
        HttpResponse<String> r = publish("cont-new", "0", events(1));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"lastEventId\":1"), r.body());
    }

    @Test
    void malformedHeaderIs400() throws Exception {
        HttpResponse<String> r = publish("cont-bad", "-3", events(1));
        assertEquals(400, r.statusCode());
        assertTrue(r.body().contains("\"error\":\"bad_last_event_id\""), r.body());
    }
}
