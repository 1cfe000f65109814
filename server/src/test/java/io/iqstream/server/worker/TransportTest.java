package io.iqstream.server.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.iqstream.server.testing.Http;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every transport serves runs, including the hand-off of connections between workers. */
class TransportTest {
    @ParameterizedTest
    @ValueSource(strings = {"epoll", "io_uring", "nio"})
    void relaysAndMovesConnectionsOn(String transport) throws Exception {
        if (transport.equals("epoll")) {
            assumeTrue(Epoll.isAvailable(), () -> "epoll unavailable here: " + Epoll.unavailabilityCause());
        }
        if (transport.equals("io_uring")) {
            assumeTrue(IoUring.isAvailable(), () -> "io_uring unavailable here: " + IoUring.unavailabilityCause());
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
                }
            }
        }
    }

    @org.junit.jupiter.api.Test
    void unknownTransportFallsBackToWhatRuns() {
        Transport t = Transport.select("auto");
        assertEquals(Epoll.isAvailable() ? "epoll" : "nio", t.name());
    }
}
