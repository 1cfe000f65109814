package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** 200 runs published and read at the same time: every subscriber gets exactly its own run's events. */
class ManyRunsTest {
    private static final int RUNS = 200;
    private static final int EVENTS = 20;

    @Test
    void twoHundredConcurrentRunsWithoutCrossTalk() throws Exception {
        try (TestServer server = TestServer.start("--workers", "2")) {
            String admin = Tokens.admin();
            List<ChunkedPublisher> pubs = new ArrayList<>();
            List<SseClient> subs = new ArrayList<>();
            try {
                for (int r = 0; r < RUNS; r++) {
                    ChunkedPublisher p = ChunkedPublisher.open(server.port(), "many-" + r, "application/x-ndjson",
                            admin);
                    p.send(event(r, 0) + "\n");
                    pubs.add(p);
                }
                for (int r = 0; r < RUNS; r++) {
                    subs.add(SseClient.open(server.port(), "/v1/runs/many-" + r + "/events",
                            "Authorization: Bearer " + admin));
                }
                for (int i = 1; i < EVENTS; i++) {
                    for (int r = 0; r < RUNS; r++) {
                        pubs.get(r).send(event(r, i) + "\n");
                    }
                }
                for (int r = 0; r < RUNS; r++) {
                    pubs.get(r).send("{\"type\":\"RUN_FINISHED\",\"runId\":\"many-" + r + "\"}\n");
                }
                for (int r = 0; r < RUNS; r++) {
                    List<SseClient.Event> got = subs.get(r).take(EVENTS + 1, 20_000);
                    SseClient.assertConsecutive(got, 1);
                    for (int i = 0; i < EVENTS; i++) {
                        assertEquals(event(r, i), got.get(i).data());
                    }
                    assertTrue(subs.get(r).awaitEnd(5000));
                }
                for (ChunkedPublisher p : pubs) {
                    assertEquals(200, p.finish().status());
                }
            } finally {
                for (SseClient s : subs) {
                    s.close();
                }
                for (ChunkedPublisher p : pubs) {
                    p.close();
                }
            }
        }
    }

    private static String event(int run, int i) {
        return "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m-" + run + "\",\"delta\":\"r" + run + "e" + i
                + "\"}";
    }
}
