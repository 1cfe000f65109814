package io.iqstream.server.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.MachineFact;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every transport serves runs, including the hand-off of connections between workers: with three workers and
 * twelve connections, some arrive on a worker that does not own their run and must move, which
 * {@code iqstream_channel_moves_total} counts.
 */
class TransportTest {
    @ParameterizedTest
    @ValueSource(strings = {"epoll", "io_uring", "nio"})
    void relaysAndMovesConnectionsOn(String transport) throws Exception {
        if (transport.equals("epoll")) {
            MachineFact.assume("epoll", Epoll.isAvailable(), () -> "epoll unavailable here: " + Epoll.unavailabilityCause());
        }
        if (transport.equals("io_uring")) {
            MachineFact.assume("io_uring", IoUring.isAvailable(), () -> "io_uring unavailable here: " + IoUring.unavailabilityCause());
        }
        try (TestServer server = TestServer.start("--transport", transport, "--workers", "3")) {
            assertEquals(transport, server.server().transportName());
            String admin = Tokens.admin();
            for (int r = 0; r < 6; r++) {
                String id = transport + "-" + r;
                Http.publish(server.base(), id, admin, "{\"type\":\"RUN_STARTED\"}", "{\"type\":\"RUN_FINISHED\"}");
                try (SseClient sub = SseClient.open(server.port(), "/v1/runs/" + id + "/events",
                        "Authorization: Bearer " + admin)) {
                    SseClient.assertConsecutive(sub.take(2, 5000), 1);
                    assertTrue(sub.awaitEnd(5000));
                }
            }
            long moves = metric(Http.get(server.base() + "/metrics").body(), "iqstream_channel_moves_total");
            assertTrue(moves > 0, "connections moved to their run's worker on " + transport + ": " + moves);
        }
    }

    /** An unlabelled counter's value from the /metrics text; fails when absent. */
    static long metric(String metricsText, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\d+)").matcher(metricsText);
        assertTrue(m.find(), name + " not in /metrics:\n" + metricsText);
        return Long.parseLong(m.group(1));
    }

    @org.junit.jupiter.api.Test
    void unknownTransportFallsBackToWhatRuns() {
        Transport t = Transport.select("auto");
        assertEquals(Epoll.isAvailable() ? "epoll" : "nio", t.name());
    }
}
