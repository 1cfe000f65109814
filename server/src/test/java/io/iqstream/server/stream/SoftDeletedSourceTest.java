package io.iqstream.server.stream;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.TestServer;
import io.iqstream.server.worker.Workers;
import org.junit.jupiter.api.Test;

/**
 * A source deleted while a fork holds its bytes is soft-deleted (410, its path not reusable), and freed whole when
 * its last fork goes: its path, its bytes and its charge to the memory budget (DURABLE-STREAMS.md, DELETE), with
 * the fork on the source's worker (freed in the fork's delete) and on the other one (freed there by a task).
 */
class SoftDeletedSourceTest {
    private static final String TYPE = "Content-Type";

    /** A stream name {@code prefix}N whose worker (of 2) is, or is not, that of {@code other}N. */
    private static int pair(String prefix, String other, boolean sameWorker) {
        for (int n = 0; ; n++) {
            boolean same = Workers.indexOf("/v1/stream/" + prefix + n, 2)
                    == Workers.indexOf("/v1/stream/" + other + n, 2);
            if (same == sameWorker) {
                return n;
            }
        }
    }

    @Test
    void aSoftDeletedSourceIsFreedWholeWhenItsLastForkGoes() throws Exception {
        try (TestServer server = TestServer.start("--durable-streams-open", "true")) {
            Metrics metrics = server.server().context().metrics();
            long usedBefore = server.server().context().budget().committedBytes();
            String message = "x".repeat(200_000);
            for (boolean sameWorker : new boolean[] {true, false}) {
                int n = pair("soft/source-", "soft/fork-", sameWorker);
                String source = server.base() + "/v1/stream/soft/source-" + n;
                String fork = server.base() + "/v1/stream/soft/fork-" + n;
                String where = sameWorker ? "fork on the source's worker" : "fork on the other worker";
                assertEquals(201, send("PUT", source, null, TYPE, "text/plain").statusCode());
                assertEquals(204, send("POST", source, message, TYPE, "text/plain").statusCode());
                assertEquals(201, send("PUT", fork, null, TYPE, "text/plain", "Stream-Forked-From",
                        "/v1/stream/soft/source-" + n).statusCode(), where);
                assertEquals(204, send("DELETE", source, null).statusCode(), where);
                assertEquals(410, send("GET", source + "?offset=-1", null).statusCode(), "soft-deleted: " + where);
                assertEquals(message, send("GET", fork + "?offset=-1", null).body(), "the fork reads the source's"
                        + " bytes: " + where);
                assertEquals(2, metrics.durableStreamsActive.sum(), "both held: " + where);

                assertEquals(204, send("DELETE", fork, null).statusCode(), where);
                Conditions.await("the source freed with its last fork: " + where, 10_000,
                        () -> metrics.durableStreamsActive.sum() == 0);
                assertEquals(0, metrics.durableBytesHeld.sum(), "the source's bytes are given back: " + where);
                assertEquals(usedBefore, server.server().context().budget().committedBytes(),
                        "the source's charge is given back: " + where);
                assertEquals(201, send("PUT", source, null, TYPE, "text/plain").statusCode(),
                        "the source's path is free again: " + where);
                assertEquals(204, send("DELETE", source, null).statusCode(), where);
                Conditions.await("the new source freed", 10_000, () -> metrics.durableStreamsActive.sum() == 0);
            }
        }
    }
}
