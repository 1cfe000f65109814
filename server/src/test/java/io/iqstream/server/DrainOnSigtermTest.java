package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.LaunchedServer;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM sent to a real server process (launched as the launcher does; {@link LaunchedServer#sigterm}), not {@code drain()} called in-process: the shutdown hook stops new runs ({@code /readyz} 503,
 * {@code 503 draining} for a new run) while the running run finishes — its publishing request is answered and its
 * subscriber gets the clean end of the stream — then the process exits with the SIGTERM status (143). And a run
 * that never ends holds the process only until {@code --drain-timeout}, then is dropped.
 */
class DrainOnSigtermTest {
    /** What the JVM exits with after SIGTERM once its shutdown hooks are done: 128 + 15. */
    private static final int SIGTERM_EXIT = 143;
    private static final String TOKEN = "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"t\"}\n";

    @Test
    void sigtermDrainsTheRunningRunThenExits() throws Exception {
        LaunchedServer server = LaunchedServer.start("--drain-timeout", "60s");
        String admin = Tokens.admin();
        try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "in-flight", "application/x-ndjson",
                admin)) {
            pub.send("{\"type\":\"RUN_STARTED\"}\n").send(TOKEN);
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/in-flight/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals(200, sub.status());
                SseClient.assertConsecutive(sub.take(2, 10_000), 1);

                server.sigterm();
                awaitReadyz(server, 503);
                HttpResponse<String> fresh = Http.publish(server.base(), "new-during-drain", admin,
                        "{\"type\":\"RUN_STARTED\"}");
                assertEquals(503, fresh.statusCode(), fresh.body());
                assertTrue(fresh.body().contains("\"draining\""), fresh.body());
                assertTrue(fresh.headers().firstValue("Retry-After").isPresent(), "503 draining has Retry-After");
                assertTrue(server.isAlive(), "still draining while the run is open:\n" + server.output());

                // the running run goes on and finishes
                pub.send(TOKEN).send("{\"type\":\"RUN_FINISHED\"}\n");
                ChunkedPublisher.Reply reply = pub.finish();
                assertEquals(200, reply.status(), reply.body());
                assertTrue(reply.body().contains("\"lastEventId\":4"), reply.body());
                List<SseClient.Event> rest = sub.take(2, 10_000);
                SseClient.assertConsecutive(rest, 3);
                assertTrue(rest.get(1).data().contains("RUN_FINISHED"), rest.get(1).data());
                assertTrue(sub.awaitEnd(10_000));
            }
            assertEquals(SIGTERM_EXIT, server.awaitExit(30_000), server.output());
            assertTrue(server.printed("drained: no open runs"), server.output());
            assertTrue(server.printed("iqstream: stopped"), server.output());
        } finally {
            server.close();
        }
        server.assertNoLeaks();
    }

    @Test
    void aRunThatNeverEndsHoldsTheProcessOnlyUntilTheDrainTimeout() throws Exception {
        long drainMs = 2_000;
        LaunchedServer server = LaunchedServer.start("--drain-timeout", "2s", "--run-idle-timeout", "10m");
        String admin = Tokens.admin();
        try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "never-ends", "application/x-ndjson",
                admin)) {
            pub.send("{\"type\":\"RUN_STARTED\"}\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/never-ends/events",
                    "Authorization: Bearer " + admin)) {
                SseClient.assertConsecutive(sub.take(1, 10_000), 1);
                long sentNs = System.nanoTime();
                server.sigterm();
                awaitReadyz(server, 503);
                int status = server.awaitExit(60_000);
                long heldMs = (System.nanoTime() - sentNs) / 1_000_000;
                assertEquals(SIGTERM_EXIT, status, server.output());
                assertTrue(heldMs >= drainMs, "the process waited the drain timeout for the open run (exited after "
                        + heldMs + " ms)");
                assertTrue(server.printed("drain timeout: 1 runs still open"), server.output());
                assertTrue(server.printed("iqstream: stopped"), server.output());
                // at the timeout the open run is dropped (as DELETE drops one): its stream is ended, with no
                // terminal event invented for it — the browser reconnects elsewhere
                assertTrue(sub.awaitEnd(10_000));
                assertEquals(0, sub.pending(), "no event after the run's first");
            }
        } finally {
            server.close();
        }
        server.assertNoLeaks();
    }

    /** Polls /readyz until it answers {@code status}; fails after 10 s. */
    private static void awaitReadyz(LaunchedServer server, int status) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        int last = -1;
        while (System.nanoTime() < deadline) {
            last = Http.get(server.base() + "/readyz").statusCode();
            if (last == status) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("/readyz answered " + last + ", not " + status + ", within 10 s:\n"
                + server.output());
    }
}
