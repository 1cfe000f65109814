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

/**
 * {@code X-IQStream-Publisher-Lease}: a producer that dies ends its run within its lease, after a broken request
 * and after a completed one, while the server's own timeouts (30 s, 5 min) stay as they are for everyone else.
 */
class PublisherLeaseTest {
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String LEASE = "X-IQStream-Publisher-Lease";

    @Test
    void brokenPublishEndsTheRunWithinItsLeaseNotThePublisherTimeout() throws Exception {
        try (TestServer server = TestServer.start("--publisher-timeout", "60s")) {
            String admin = Tokens.admin();
            ChunkedPublisher pub = ChunkedPublisher.open(server.port(), "lease-broken", "application/x-ndjson",
                    admin, LEASE + ": 1000ms");
            pub.send(START + "\n");
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/lease-broken/events",
                    "Authorization: Bearer " + admin)) {
                assertEquals("1", sub.next(10_000).id());
                long brokenAt = System.nanoTime();
                pub.breakOff();
                SseClient.Event error = sub.next(10_000);
                assertEquals("2", error.id(), "the run ended long before --publisher-timeout (60 s)");
                assertWithinLease("a broken publish", 1000, brokenAt);
                assertTrue(error.data().contains("\"code\":\"PUBLISHER_LOST\""), error.data());
                assertTrue(sub.awaitEnd(5000));
            }
        }
    }

    @Test
    void noRequestAfterACompletedOneEndsTheRunWithinItsLease() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            HttpResponse<String> r = Http.post(server.base() + "/v1/runs/lease-done/events", "application/x-ndjson",
                    START + "\n", "Authorization", "Bearer " + admin, LEASE, "1000ms");
            long answeredAt = System.nanoTime();
            assertEquals(200, r.statusCode(), r.body());
            try (SseClient sub = SseClient.open(server.port(), "/v1/runs/lease-done/events",
                    "Authorization: Bearer " + admin)) {
                List<SseClient.Event> events = sub.take(2, 10_000);
                assertWithinLease("no request after a completed one", 1000, answeredAt);
                assertTrue(events.get(1).data().contains("\"code\":\"PUBLISHER_LOST\""),
                        "not RUN_IDLE after --run-idle-timeout (5 min): " + events.get(1).data());
            }
            assertEquals(1, server.server().context().metrics().publishersLost.sum());
        }
    }

    @Test
    void batchesWithinTheLeaseContinueTheRun() throws Exception {
        try (TestServer server = TestServer.start()) {
            String admin = Tokens.admin();
            String url = server.base() + "/v1/runs/lease-batches/events";
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> r = Http.post(url, "application/x-ndjson",
                        (i == 0 ? START : "{\"type\":\"CUSTOM\",\"name\":\"n\",\"value\":" + i + "}") + "\n",
                        "Authorization", "Bearer " + admin, LEASE, "10s", "Last-Event-ID", String.valueOf(i));
                assertEquals(200, r.statusCode(), r.body());
            }
            HttpResponse<String> end = Http.post(url, "application/x-ndjson", FINISH + "\n",
                    "Authorization", "Bearer " + admin, "Last-Event-ID", "3");
            assertEquals("{\"runId\":\"lease-batches\",\"lastEventId\":4,\"ended\":true}", end.body());
            assertEquals(0, server.server().context().metrics().publishersLost.sum());
        }
    }

    @Test
    void aMalformedOrTooLongLeaseIsRefusedBeforeAnythingIsAppended() throws Exception {
        try (TestServer server = TestServer.start("--run-idle-timeout", "1m")) {
            String admin = Tokens.admin();
            for (String bad : new String[] {"soon", "-1s", "2m", "1.5s"}) {
                HttpResponse<String> r = Http.post(server.base() + "/v1/runs/lease-bad/events",
                        "application/x-ndjson", START + "\n", "Authorization", "Bearer " + admin, LEASE, bad);
                assertEquals(400, r.statusCode(), bad + ": " + r.body());
                assertTrue(r.body().contains("\"error\":\"bad_publisher_lease\""), r.body());
            }
            assertEquals(404, Http.get(server.base() + "/v1/runs/lease-bad", "Authorization", "Bearer " + admin)
                    .statusCode(), "no run was created");
        }
    }

    /**
     * Fails unless the run's end reached its reader within the lease × 1.5 + 1 s of {@code sinceNanos} (room for a
     * loaded 2-CPU machine; with the tests' 1 s lease, one applied four times late fails); prints the figure.
     */
    private static void assertWithinLease(String what, long leaseMs, long sinceNanos) {
        long ms = (System.nanoTime() - sinceNanos) / 1_000_000;
        long boundMs = leaseMs * 3 / 2 + 1000;
        System.out.printf("publisher lease %d ms, %s: PUBLISHER_LOST reached the reader %d ms later (bound %d ms)%n",
                leaseMs, what, ms, boundMs);
        assertTrue(ms <= boundMs, what + ": the run ended " + ms + " ms after, past its " + leaseMs + " ms lease × 1.5"
                + " + 1 s (" + boundMs + " ms)");
    }
}
