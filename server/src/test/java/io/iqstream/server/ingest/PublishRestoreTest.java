package io.iqstream.server.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code X-IQStream-Restore: N}: a publisher recreates a run whose node was lost from its events 1..N; a reader
 * that resumes within them while the restore is under way waits for them and gets exactly the rest.
 */
class PublishRestoreTest {
    static TestServer server;
    static String admin;

    @BeforeAll
    static void start() {
        server = TestServer.start("--await-run", "10s");
        admin = Tokens.admin();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static HttpResponse<String> publish(String runId, String body, String... headers) throws Exception {
        String[] all = new String[headers.length + 2];
        all[0] = "Authorization";
        all[1] = "Bearer " + admin;
        System.arraycopy(headers, 0, all, 2, headers.length);
        return Http.post(server.base() + "/v1/runs/" + runId + "/events", "application/x-ndjson", body, all);
    }

    private static String events(int from, int to) {
        StringBuilder sb = new StringBuilder();
        for (int i = from; i <= to; i++) {
            sb.append("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"d").append(i).append("\"}\n");
        }
        return sb.toString();
    }

    @Test
    void aReaderThatResumesWithinARestoreWaitsForItAndGetsExactlyTheRest() throws Exception {
        // the reader comes first: its response head waits for the run, so it is opened on another thread
        CompletableFuture<SseClient> opening = CompletableFuture.supplyAsync(() -> {
            try {
                return SseClient.open(server.port(), "/v1/runs/rs-wait/events", "Authorization: Bearer " + admin,
                        "Last-Event-ID: 4");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        var worker = server.server().context().workers().ownerOf("rs-wait");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!worker.loop().submit(() -> worker.registry().isAwaited("rs-wait")).syncUninterruptibly().getNow()) {
            assertTrue(System.nanoTime() < deadline, "the reader waits for the run within 10 s");
            Thread.sleep(20); // polling a condition, bounded by the deadline
        }
        HttpResponse<String> r = publish("rs-wait", events(1, 6), "Last-Event-ID", "0", "X-IQStream-Restore", "5");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"runId\":\"rs-wait\",\"lastEventId\":6,\"ended\":false}", r.body());
        try (SseClient reader = opening.get(10, TimeUnit.SECONDS)) {
            assertEquals(200, reader.status(), "a reader within the restore is not told bad_last_event_id");
            List<SseClient.Event> got = reader.take(2, 8000);
            assertEquals("5", got.get(0).id());
            assertEquals("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"d5\"}", got.get(0).data());
            assertEquals("6", got.get(1).id());
        }
    }

    @Test
    void withoutARestoreAReaderAheadOfTheRunIsStillRefused() throws Exception {
        assertEquals(200, publish("rs-ahead", events(1, 2)).statusCode());
        HttpResponse<String> r = Http.get(server.base() + "/v1/runs/rs-ahead/events", "Authorization",
                "Bearer " + admin, "Last-Event-ID", "4");
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("bad_last_event_id"), r.body());
    }

    @Test
    void aMalformedRestoreIs400BadRestoreAndAppendsNothing() throws Exception {
        for (String[] h : new String[][] {{"X-IQStream-Restore", "x"}, {"X-IQStream-Restore", "0"},
                {"X-IQStream-Restore", "3", "Last-Event-ID", "3"}}) {
            HttpResponse<String> r = publish("rs-bad", events(1, 3), h);
            assertEquals(400, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"error\":\"bad_restore\""), r.body());
        }
        assertEquals(404, Http.get(server.base() + "/v1/runs/rs-bad", "Authorization", "Bearer " + admin)
                .statusCode(), "nothing was created");
    }

    @Test
    void aRestoreOfARunThatExistsIsEventIdMismatchNotASecondCopy() throws Exception {
        assertEquals(200, publish("rs-exists", events(1, 3)).statusCode());
        HttpResponse<String> r = publish("rs-exists", events(1, 5), "Last-Event-ID", "0", "X-IQStream-Restore", "5");
        assertEquals(409, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"error\":\"event_id_mismatch\"") && r.body().contains("\"lastEventId\":3"),
                r.body());
    }
}
