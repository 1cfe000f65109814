package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code X-IQStream-Publisher-Lease}: a producer that dies ends its run within its lease, after a broken request
 * and after a completed one, while the server's own timeouts ({@code --publisher-timeout},
 * {@code --run-idle-timeout}) stay as they are for everyone else.
 */
class PublisherLeaseTest {
    private static final String START = "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String FINISH = "{\"type\":\"RUN_FINISHED\",\"threadId\":\"t\",\"runId\":\"r\"}";
    private static final String LEASE = "X-IQStream-Publisher-Lease";

    /*
     * How long a lease takes is checked against a clock a busy machine cannot move apart from it: the server's own
     * timeout, run by the same server for a run with no lease that lost its publisher first. Each run's end event
     * carries the server's time; the leased run's must come first. A lease applied as the server's timeout, or 10 x
     * longer, ends it after the other one.
     */

    @Test
    void brokenPublishEndsTheRunWithinItsLeaseNotThePublisherTimeout() throws Exception {
        try (TestServer server = TestServer.start("--publisher-timeout", "5s")) {
            String admin = Tokens.admin();
            ChunkedPublisher unleased = ChunkedPublisher.open(server.port(), "lease-none", "application/x-ndjson",
                    admin);
            ChunkedPublisher leased = ChunkedPublisher.open(server.port(), "lease-broken", "application/x-ndjson",
                    admin, LEASE + ": 1000ms");
            unleased.send(START + "\n");
            leased.send(START + "\n");
            try (SseClient a = SseClient.open(server.port(), "/v1/runs/lease-none/events",
                    "Authorization: Bearer " + admin);
                    SseClient b = SseClient.open(server.port(), "/v1/runs/lease-broken/events",
                            "Authorization: Bearer " + admin)) {
                assertEquals("1", a.next(30_000).id());
                assertEquals("1", b.next(30_000).id());
                unleased.breakOff(); // first: its 5 s begin before the leased run's 1 s
                leased.breakOff();
                SseClient.Event leaseEnd = b.next(30_000);
                SseClient.Event timeoutEnd = a.next(30_000);
                assertEquals("2", leaseEnd.id(), "the leased run ended");
                assertEquals("2", timeoutEnd.id(), "the run without a lease ended (--publisher-timeout 5s)");
                assertTrue(leaseEnd.data().contains("\"code\":\"PUBLISHER_LOST\""), leaseEnd.data());
                assertTrue(timeoutEnd.data().contains("\"code\":\"PUBLISHER_LOST\""), timeoutEnd.data());
                assertEndedFirst("a broken publish", leaseEnd, timeoutEnd, "--publisher-timeout 5s");
                assertTrue(b.awaitEnd(30_000));
            }
            assertEquals(2, server.server().context().metrics().publishersLost.sum());
        }
    }

    @Test
    void noRequestAfterACompletedOneEndsTheRunWithinItsLease() throws Exception {
        try (TestServer server = TestServer.start("--run-idle-timeout", "5s")) {
            String admin = Tokens.admin();
            HttpResponse<String> idle = Http.post(server.base() + "/v1/runs/lease-idle/events",
                    "application/x-ndjson", START + "\n", "Authorization", "Bearer " + admin);
            assertEquals(200, idle.statusCode(), idle.body()); // first: its 5 s begin before the lease's 1 s
            HttpResponse<String> r = Http.post(server.base() + "/v1/runs/lease-done/events", "application/x-ndjson",
                    START + "\n", "Authorization", "Bearer " + admin, LEASE, "1000ms");
            assertEquals(200, r.statusCode(), r.body());
            try (SseClient a = SseClient.open(server.port(), "/v1/runs/lease-idle/events",
                    "Authorization: Bearer " + admin);
                    SseClient b = SseClient.open(server.port(), "/v1/runs/lease-done/events",
                            "Authorization: Bearer " + admin)) {
                SseClient.Event leaseEnd = b.take(2, 30_000).get(1);
                SseClient.Event idleEnd = a.take(2, 30_000).get(1);
                assertTrue(leaseEnd.data().contains("\"code\":\"PUBLISHER_LOST\""),
                        "not RUN_IDLE after --run-idle-timeout: " + leaseEnd.data());
                assertTrue(idleEnd.data().contains("\"code\":\"RUN_IDLE\""), idleEnd.data());
                assertEndedFirst("no request after a completed one", leaseEnd, idleEnd, "--run-idle-timeout 5s");
            }
            assertEquals(1, server.server().context().metrics().publishersLost.sum());
            assertEquals(1, server.server().context().metrics().runsIdled.sum());
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
     * Fails unless the leased run's end event was made before the other run's, by the server's clock (the events'
     * {@code timestamp}); prints both. The other run lost its publisher first and waits 5 s; the lease is 1 s.
     */
    private static void assertEndedFirst(String what, SseClient.Event leaseEnd, SseClient.Event otherEnd,
            String other) {
        long leaseEndMs = timestampMs(leaseEnd);
        long otherEndMs = timestampMs(otherEnd);
        System.out.printf("publisher lease 1000 ms, %s: the run ended %d ms before the one under %s%n", what,
                otherEndMs - leaseEndMs, other);
        assertTrue(leaseEndMs < otherEndMs, what + ": the leased run ended at " + leaseEndMs + ", not before the"
                + " run under " + other + " (" + otherEndMs + ") that lost its publisher first");
    }

    private static long timestampMs(SseClient.Event e) {
        Matcher m = Pattern.compile("\"timestamp\":(\\d+)").matcher(e.data());
        assertTrue(m.find(), "the server's end event carries its time: " + e.data());
        return Long.parseLong(m.group(1));
    }
}
