package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.bench.driver.Peers;
import io.iqstream.bench.server.CentrifugoServer;
import io.iqstream.bench.server.MercureServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench smoke of the peers built from the Go module proxy ({@code ./iqstream bench --peers-smoke}):
 * the real pipeline (each peer started as a process, the generator, the checker, the report) against
 * Mercure (local and bolt) and Centrifugo, two short runs each with browsers dropping and resuming.
 * Centrifugo (recovery) delivers everything and loses nothing on reconnect; Mercure with its history
 * replays from it on a reconnect, and misses at most a run's first events (published before its first
 * subscribe, which carries no Last-Event-ID); Mercure local keeps no history, so a browser that dropped
 * misses what was published while it was away (counted lost or late, never as an error of the driver).
 * Run by the peers suite of
 * scripts/test-all.sh, after bench/peers/install-*.sh.
 */
@Tag(Peers.TAG)
class PeersSmokeTest {
  @TempDir Path out;

  @Test
  @Timeout(300)
  void eachGoPeerCarriesShortRunsWithResumes() throws Exception {
    Peers.assumeBuilt(MercureServer.binary(Peers.dir()), "install-mercure.sh");
    Peers.assumeBuilt(CentrifugoServer.binary(Peers.dir()), "install-centrifugo.sh");
    Path repo = Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize();
    BenchOptions options = BenchOptions.parse(new String[] {"--peers-smoke", "--no-pin",
        "--out", out.toString()}, repo);
    Path dir = new BenchRunner(options, "--peers-smoke", false).run();

    JsonNode doc = new ObjectMapper().readTree(dir.resolve("results.json").toFile());
    Map<String, JsonNode> rows = new HashMap<>();
    doc.get("results").forEach(r -> rows.put(r.get("server").asText(), r));
    assertEquals(3, rows.size(), () -> "one row per peer: " + rows.keySet());
    for (String server : new String[] {"mercure", "mercure-history", "centrifugo"}) {
      JsonNode r = rows.get(server);
      assertTrue(r != null, "a row for " + server);
      assertFalse(r.has("error"), () -> server + ": " + r.get("error"));
      assertEquals(2, r.get("concurrency").asInt());
      assertTrue(r.get("events_expected").asLong() >= 429 * 2, server + ": whole runs ended in the window");
      assertTrue(r.get("reconnecting_runs").asLong() >= 1, server + ": some browsers dropped and resumed");
      for (String zero : new String[] {"duplicates", "corrupted", "reordered", "subscribe_errors",
          "publish_errors"}) {
        assertEquals(0, r.get(zero).asLong(), server + ": " + zero);
      }
      assertTrue(r.hasNonNull("p99_ms") && r.get("p99_ms").asDouble() > 0, server + ": live latency measured");
      assertTrue(r.get("cpu_us_per_event").asDouble() > 0, server + ": its CPU read");
    }
    JsonNode centrifugo = rows.get("centrifugo");
    assertEquals(centrifugo.get("events_expected").asLong(), centrifugo.get("events_delivered").asLong(),
        "centrifugo: 100% delivery (its first connection recovers from offset 0)");
    assertEquals(0, centrifugo.get("lost_on_reconnect").asLong(), "centrifugo: recovery replays what was missed");
    assertEquals(0, centrifugo.get("late_on_reconnect").asLong(), "centrifugo: nothing missing after the drain");
    assertTrue(centrifugo.has("resume_p50_ms"), "centrifugo: time to resume measured");
    // Mercure's first subscribe (no Last-Event-ID) gets only what is published after it: an event of the run
    // published before the hub registered the subscriber (the run's first, when both start at once) is not
    // replayed; a reconnect with Last-Event-ID is replayed from the bolt history. So at most a run's first
    // events are missing, where transport local misses about a second of events per reconnect.
    JsonNode history = rows.get("mercure-history");
    long historyRuns = history.get("events_expected").asLong() / 429;
    assertTrue(history.get("events_expected").asLong() - history.get("events_delivered").asLong() <= 2 * historyRuns,
        () -> "mercure-history: all but a run's first events delivered: " + history);
    assertTrue(history.get("lost_on_reconnect").asLong() <= 2 * historyRuns,
        () -> "mercure-history: Last-Event-ID resumes from the history: " + history);
    assertEquals(0, history.get("late_on_reconnect").asLong(), "mercure-history: nothing missing after the drain");
    assertTrue(history.has("resume_p50_ms"), "mercure-history: time to resume measured");
    JsonNode local = rows.get("mercure");
    assertTrue(local.get("lost_on_reconnect").asLong() + local.get("late_on_reconnect").asLong() >= 1,
        "transport local keeps no history: a browser that dropped misses what came while it was away");
    assertTrue(local.get("events_delivered").asLong() < local.get("events_expected").asLong());
    assertTrue(local.get("lost_on_reconnect").asLong() + local.get("late_on_reconnect").asLong()
        >= local.get("reconnecting_runs").asLong(), "transport local: each reconnect misses what came meanwhile");
    for (String f : new String[] {"REPORT.md", "results.json"}) {
      assertTrue(Files.size(dir.resolve(f)) > 100, f);
    }
  }
}
