package io.iqstream.server.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.ingest.PublishSession;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunReader;
import io.iqstream.server.testing.ChunkedPublisher;
import io.iqstream.server.testing.SseClient;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A run's publisher and its subscribers are served by one worker: the event loop that reads the publisher's
 * socket is the one that writes the subscribers' sockets (Netty runs every read and write of a channel on the
 * channel's loop, so equal loops mean equal threads).
 */
class WorkerAffinityTest {
    @Test
    void publisherAndSubscribersOfARunShareTheOwnersLoop() throws Exception {
        try (TestServer server = TestServer.start("--workers", "4")) {
            String admin = Tokens.admin();
            Workers workers = server.server().context().workers();
            Set<Integer> ownersSeen = new HashSet<>();
            for (int r = 0; r < 12; r++) {
                String runId = "affinity-" + r;
                Worker owner = workers.ownerOf(runId);
                ownersSeen.add(owner.index());
                try (ChunkedPublisher pub = ChunkedPublisher.open(server.port(), runId, "application/x-ndjson",
                        admin)) {
                    pub.send("{\"type\":\"RUN_STARTED\"}\n");
                    List<SseClient> subs = new ArrayList<>();
                    for (int s = 0; s < 3; s++) {
                        SseClient c = SseClient.open(server.port(), "/v1/runs/" + runId + "/events",
                                "Authorization: Bearer " + admin);
                        c.next(5000);
                        subs.add(c);
                    }
                    CompletableFuture<String> check = new CompletableFuture<>();
                    owner.loop().execute(() -> check.complete(describe(owner.loop(),
                            owner.registry().get(runId))));
                    assertEquals("ok", check.get());
                    pub.send("{\"type\":\"RUN_FINISHED\"}\n");
                    for (SseClient c : subs) {
                        assertEquals("2", c.next(5000).id());
                        c.close();
                    }
                    assertEquals(200, pub.finish().status());
                }
            }
            assertTrue(ownersSeen.size() > 1, "runs spread over workers: " + ownersSeen);
            assertTrue(server.server().context().metrics().channelMoves.sum() > 0,
                    "connections accepted on another loop were moved to the owner");
        }
    }

    /** Runs on the owner loop: every channel of the run must be registered with it. */
    private static String describe(EventLoop owner, Run run) {
        if (run == null) {
            return "run missing on its owner";
        }
        if (!owner.inEventLoop()) {
            return "not on the owner loop";
        }
        PublishSession publisher = (PublishSession) run.publisher();
        if (publisher == null || publisher.channel().eventLoop() != owner) {
            return "publisher served elsewhere";
        }
        if (run.readerCount() != 3) {
            return "readers: " + run.readerCount();
        }
        for (RunReader r : run.readers()) {
            if (r.channel().eventLoop() != owner) {
                return "subscriber served elsewhere";
            }
        }
        return "ok";
    }

    @Test
    void ownerIsStableAndSpreadsIds() {
        try (TestServer server = TestServer.start("--workers", "4")) {
            Workers workers = server.server().context().workers();
            int[] counts = new int[4];
            for (int i = 0; i < 4000; i++) {
                Worker w = workers.ownerOf("run-" + i);
                assertSame(w, workers.ownerOf("run-" + i));
                counts[w.index()]++;
            }
            for (int c : counts) {
                assertTrue(c > 700 && c < 1300, java.util.Arrays.toString(counts));
            }
            assertFalse(workers.ownerOf("a") == null);
        }
    }
}
