package io.iqstream.server.run;

import static io.iqstream.server.testing.DurableHttp.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.Conditions;
import io.iqstream.server.testing.LaunchedServer;
import io.iqstream.server.testing.MetricValues;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ended AG-UI runs on a real disk ({@code --durability disk}), the server in its own process: a run that ends is
 * written once, its bytes leave memory, a reader gets it back whole from its file, and it outlives a SIGKILL with
 * its ids and its thread's listing, for the rest of its retention. A damaged file is not served; the rest are.
 */
class EndedRunsOnDiskTest {

    private static LaunchedServer start(Path dir, String... more) throws IOException {
        // no retry jitter: a stream's first line is then the same on every read, and reads compare byte for byte
        List<String> flags = new ArrayList<>(List.of("--durability", "disk", "--data-dir", dir.toString(),
                "--auth", "none", "--retry-jitter", "0"));
        flags.addAll(List.of(more));
        return LaunchedServer.start(flags.toArray(new String[0]));
    }

    /** A run of {@code events} events: RUN_STARTED in {@code thread}, text, RUN_FINISHED; its NDJSON body. */
    private static String run(String runId, String thread, int events) {
        StringBuilder b = new StringBuilder();
        b.append("{\"type\":\"RUN_STARTED\",\"threadId\":\"").append(thread).append("\",\"runId\":\"").append(runId)
                .append("\"}\n");
        for (int i = 0; i < events - 2; i++) {
            b.append("{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"").append(runId)
                    .append(" token ").append(i).append(" \"}\n");
        }
        b.append("{\"type\":\"RUN_FINISHED\",\"threadId\":\"").append(thread).append("\",\"runId\":\"")
                .append(runId).append("\"}\n");
        return b.toString();
    }

    private static void publish(LaunchedServer s, String runId, String body) throws Exception {
        HttpResponse<String> r = send("POST", s.base() + "/v1/runs/" + runId + "/events", body, "Content-Type",
                "application/x-ndjson");
        assertEquals(200, r.statusCode(), runId + ": " + r.body());
    }

    private static HttpResponse<String> read(LaunchedServer s, String runId, String... headers) throws Exception {
        return send("GET", s.base() + "/v1/runs/" + runId + "/events?live=false", null, headers);
    }

    private static long counter(LaunchedServer s, String name) throws Exception {
        return MetricValues.of(s.base(), name);
    }

    private static int listed(LaunchedServer s, String thread) throws Exception {
        HttpResponse<String> r = send("GET", s.base() + "/v1/threads/" + thread + "/runs?limit=100", null);
        assertEquals(200, r.statusCode(), r.body());
        return (int) Pattern.compile("\"runId\"").matcher(r.body()).results().count();
    }

    /**
     * 24 runs in two threads end; each is written once and its bytes leave memory (the counter of spilled runs
     * reaches 24 and the memory committed falls back); reading one loads it back whole. SIGKILL, start again on
     * the same data directory: every run reads as it did, byte for byte, ids and all; a resume from
     * {@code Last-Event-ID} gets the rest; both threads list their runs. A run still open at the kill is not on
     * disk: 404 after the restart.
     */
    @Test
    void anEndedRunOutlivesSigkillWithItsIdsAndItsThreadListing(@TempDir Path dir) throws Exception {
        Map<String, String> before = new HashMap<>();
        LaunchedServer s = start(dir);
        try {
            for (int i = 0; i < 24; i++) {
                String id = "ended-" + i;
                publish(s, id, run(id, "thread-" + (i % 2), 40 + i));
            }
            Conditions.await("24 ended runs spilled", 30_000, () -> {
                try {
                    return counter(s, "iqstream_runs_spilled_total") == 24;
                } catch (Exception e) {
                    return false;
                }
            });
            assertEquals(0, counter(s, "iqstream_runs_loaded_total"));
            for (int i = 0; i < 24; i++) {
                HttpResponse<String> r = read(s, "ended-" + i);
                assertEquals(200, r.statusCode());
                assertTrue(r.body().contains("id: " + (40 + i) + "\n"), "the whole run, its last id");
                before.put("ended-" + i, r.body());
            }
            assertEquals(24, counter(s, "iqstream_runs_loaded_total"), "each read loaded its run from disk");
            // an open run: no file until it ends
            HttpResponse<String> open = send("POST", s.base() + "/v1/runs/open-run/events",
                    "{\"type\":\"RUN_STARTED\",\"threadId\":\"thread-0\",\"runId\":\"open-run\"}\n",
                    "Content-Type", "application/x-ndjson");
            assertEquals(200, open.statusCode());
            s.sigkill();
        } finally {
            s.close();
        }

        LaunchedServer again = start(dir);
        try {
            assertTrue(again.printed("ended runs on disk: 24 held again"), again.output());
            for (Map.Entry<String, String> e : before.entrySet()) {
                HttpResponse<String> r = read(again, e.getKey());
                assertEquals(200, r.statusCode(), e.getKey());
                assertEquals(e.getValue(), r.body(), e.getKey() + " reads as it did before the kill");
            }
            HttpResponse<String> resumed = read(again, "ended-5", "Last-Event-ID", "40");
            assertEquals(200, resumed.statusCode());
            assertTrue(resumed.body().contains("id: 41\n"), resumed.body());
            assertFalse(resumed.body().contains("id: 40\n"), "the resume starts after 40");
            assertTrue(resumed.body().contains("id: 45\n") && resumed.body().contains("RUN_FINISHED"),
                    "the resume gets the rest: " + resumed.body());
            assertEquals(204, read(again, "ended-5", "Last-Event-ID", "45").statusCode(), "nothing new after 45");
            assertEquals(12, listed(again, "thread-0"), "thread-0's ended runs are listed (the open one is gone)");
            assertEquals(12, listed(again, "thread-1"));
            assertEquals(404, read(again, "open-run").statusCode(), "a run open at the kill is not on disk");
            again.assertNoLeaks();
        } finally {
            again.close();
        }
    }

    /**
     * A run's file damaged in its middle (a flipped byte: its checksum no longer matches) is left in place and not
     * served after a restart; the server starts and serves the other runs. DELETE of an ended run removes its file.
     */
    @Test
    void aDamagedRunFileIsNotServedAndTheOthersAre(@TempDir Path dir) throws Exception {
        LaunchedServer s = start(dir);
        try {
            for (String id : List.of("good-1", "damaged", "good-2", "deleted")) {
                publish(s, id, run(id, "t", 30));
            }
            Conditions.await("4 ended runs spilled", 30_000, () -> {
                try {
                    return counter(s, "iqstream_runs_spilled_total") == 4;
                } catch (Exception e) {
                    return false;
                }
            });
            assertEquals(4, runFiles(dir).size());
            assertEquals(204, send("DELETE", s.base() + "/v1/runs/deleted", null).statusCode());
            Conditions.await("the deleted run's file removed", 30_000, () -> runFiles(dir).size() == 3);
            s.sigkill();
        } finally {
            s.close();
        }
        Path damaged = dir.resolve("runs").resolve(fileNameOf("damaged"));
        try (FileChannel ch = FileChannel.open(damaged, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long middle = ch.size() / 2;
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
            ch.read(b, middle);
            b.put(0, (byte) (b.get(0) ^ 0x20)).rewind();
            ch.write(b, middle);
        }
        LaunchedServer again = start(dir);
        try {
            assertTrue(again.printed("ended runs on disk: 2 held again"), again.output());
            assertTrue(again.printed("not served"), "the damaged file is logged");
            assertEquals(404, read(again, "damaged").statusCode());
            assertEquals(200, read(again, "good-1").statusCode());
            assertEquals(200, read(again, "good-2").statusCode());
            assertEquals(404, read(again, "deleted").statusCode());
            assertTrue(Files.exists(damaged), "left in place for the operator");
        } finally {
            again.close();
        }
    }

    /** A run whose retention passes while the server is down is not held again, and its file is removed. */
    @Test
    void aRunWhoseRetentionPassedWhileDownIsRemoved(@TempDir Path dir) throws Exception {
        // a retention longer than the time an ended run keeps its bytes in memory, so it is spilled first
        long retentionMs = RunRegistry.KEEP_LOADED_NANOS / 1_000_000 + 3_000;
        String retention = retentionMs + "ms";
        LaunchedServer s = start(dir, "--retention", retention);
        long endedAt;
        try {
            publish(s, "short", run("short", "t", 10));
            endedAt = System.currentTimeMillis();
            Conditions.await("spilled", 30_000, () -> {
                try {
                    return counter(s, "iqstream_runs_spilled_total") == 1;
                } catch (Exception e) {
                    return false;
                }
            });
            assertEquals(1, runFiles(dir).size());
            s.sigkill();
        } finally {
            s.close();
        }
        // the retention passes while no server runs
        Thread.sleep(Math.max(0, endedAt + retentionMs + 500 - System.currentTimeMillis()));
        LaunchedServer again = start(dir, "--retention", retention);
        try {
            assertTrue(again.printed("ended runs on disk: 0 held again"), again.output());
            assertEquals(404, read(again, "short").statusCode());
            Conditions.await("its file removed", 30_000, () -> runFiles(dir).isEmpty());
        } finally {
            again.close();
        }
    }

    private static List<Path> runFiles(Path dir) {
        try (Stream<Path> files = Files.list(dir.resolve("runs"))) {
            return files.toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String fileNameOf(String runId) throws Exception {
        byte[] hash = java.security.MessageDigest.getInstance("SHA-256")
                .digest(runId.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return java.util.HexFormat.of().formatHex(hash, 0, 16) + ".log";
    }
}
