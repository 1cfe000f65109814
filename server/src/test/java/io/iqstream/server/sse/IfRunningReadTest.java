package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code ?ifRunning=true}: a read of a running run only, so that a resume is one request (the AI SDK's
 * {@code resumeExistingStream}: a stream, {@code null} for an ended run, {@code undefined} for an unknown one).
 */
class IfRunningReadTest {
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String FINISHED = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";

    private static String event(int i) {
        return "{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":" + i + "}";
    }

    @Test
    void aRunningRunIsReadLiveFromItsFirstEvent() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "if-open", admin, START, event(2));
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/if-open/events?ifRunning=true",
                    "Authorization: Bearer " + admin)) {
                assertEquals(200, sub.status());
                SseClient.assertConsecutive(sub.take(2, 10_000), 1);
                Http.publish(server.base(), "if-open", admin, event(3), FINISHED);
                SseClient.assertConsecutive(sub.take(2, 10_000), 3);
                assertTrue(sub.awaitEnd(10_000), "the stream ends with the run, as any live read");
            }
        }
    }

    @Test
    void anEndedRunIs409RunEndedAndNotRead() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "if-ended", admin, START, event(2), FINISHED);
            HttpResponse<String> r = Http.get(server.base() + "/v1/runs/if-ended/events?ifRunning=true",
                    "Authorization", "Bearer " + admin);
            assertEquals(409, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"error\":\"run_ended\""), r.body());
            assertFalse(r.body().contains("CUSTOM"), "no event is streamed: " + r.body());
            // without the parameter the ended run is still read whole
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/if-ended/events",
                    "Authorization: Bearer " + admin)) {
                SseClient.assertConsecutive(sub.take(3, 10_000), 1);
            }
        }
    }

    @Test
    void anUnknownRunIs404WithoutAwaitingItAndADroppedOne410() throws Exception {
        try (TestServer server = TestServer.start("--await-run", "10s")) {
            String admin = Tokens.admin();
            // an order, not a speed: a plain read of another unknown run, begun first, awaits it (--await-run); the
            // read with ifRunning=true is answered while that one still waits
            CompletableFuture<HttpResponse<String>> awaiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return Http.get(server.base() + "/v1/runs/if-awaited/events", "Authorization", "Bearer " + admin);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Conditions.await("the plain read awaits its run", 30_000, () -> isAwaited(server, "if-awaited"));
            HttpResponse<String> r = Http.get(server.base() + "/v1/runs/if-nobody/events?ifRunning=true",
                    "Authorization", "Bearer " + admin);
            assertEquals(404, r.statusCode(), r.body());
            assertTrue(!awaiting.isDone() && isAwaited(server, "if-awaited"), "answered while a read begun before it"
                    + " still awaited its run (--await-run 10s): not awaited itself");
            Http.publish(server.base(), "if-awaited", admin, START, FINISHED);
            assertEquals(200, awaiting.get(30, TimeUnit.SECONDS).statusCode(), "the awaited run came and was read");
            Http.publish(server.base(), "if-dropped", admin, START, FINISHED);
            assertEquals(204, Http.delete(server.base() + "/v1/runs/if-dropped", "Authorization", "Bearer " + admin)
                    .statusCode());
            assertEquals(410, Http.get(server.base() + "/v1/runs/if-dropped/events?ifRunning=true",
                    "Authorization", "Bearer " + admin).statusCode());
        }
    }

    /** Whether a read awaits {@code runId} on its worker (asked on that worker's loop). */
    private static boolean isAwaited(TestServer server, String runId) {
        var worker = server.server().context().workers().ownerOf(runId);
        return worker.loop().submit(() -> worker.registry().isAwaited(runId)).syncUninterruptibly().getNow();
    }

    @Test
    void ifRunningTakesOnlyTrueOrFalse() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            Http.publish(server.base(), "if-bad", admin, START);
            HttpResponse<String> r = Http.get(server.base() + "/v1/runs/if-bad/events?ifRunning=yes",
                    "Authorization", "Bearer " + admin);
            assertEquals(400, r.statusCode());
            assertTrue(r.body().contains("ifRunning must be true or false"), r.body());
        }
    }
}
