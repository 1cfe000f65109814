package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.bench.server.IqStreamServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CI smoke of the bench: the real pipeline (server jar started as a process, the generator, the
 * checker, the report) against IQ-Stream, a few short runs for a few seconds. Needs no apt packages.
 */
class BenchSmokeTest {
  @TempDir Path out;

  @Test
  @Timeout(180)
  void smallLoadAgainstIqStreamDeliversEverythingAndWritesWellFormedResults() throws Exception {
    Path repo = Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize();
    Path jar = IqStreamServer.defaultJar(repo);
    if (!Files.isRegularFile(jar)) {
      // under CI a missing jar is a broken build, not a reason to skip
      assertFalse("true".equals(System.getenv("CI")), "no server jar at " + jar + " (CI=true)");
      System.out.println("BenchSmokeTest skipped: no server jar at " + jar);
      Assumptions.abort("no server jar at " + jar);
    }
    BenchOptions options = BenchOptions.parse(new String[] {
        "--servers", "iqstream", "--levels", "10", "--run-length", "2s", "--warmup", "2s", "--warmup-max", "6s",
        "--window", "3s", "--drain", "20s", "--drop-every", "5", "--no-pin",
        "--out", out.toString()}, repo);
    Path dir = new BenchRunner(options, "--smoke", false).run();

    JsonNode doc = new ObjectMapper().readTree(dir.resolve("results.json").toFile());
    assertEquals(1, doc.get("results").size());
    JsonNode r = doc.get("results").get(0);
    assertFalse(r.has("error"), () -> "error: " + r.get("error"));
    assertEquals("iqstream", r.get("server").asText());
    assertEquals(10, r.get("concurrency").asInt());
    assertTrue(r.get("events_expected").asLong() >= 429 * 5, "several runs ended in the window");
    assertEquals(r.get("events_expected").asLong(), r.get("events_delivered").asLong(),
        "100% delivery");
    assertEquals(1.0, r.get("delivered_ratio").asDouble());
    assertTrue(r.get("reconnecting_runs").asLong() >= 1, "some browsers dropped and resumed");
    assertEquals(0, r.get("lost_on_reconnect").asLong());
    assertEquals(0, r.get("late_on_reconnect").asLong());
    // memory with the heap: IQ-Stream's live heap read from the JVM at rest and loaded, in the figure
    assertTrue(r.get("heap_kib_at_rest").asLong() > 0, "live heap at rest read");
    assertTrue(r.get("heap_kib_loaded").asLong() > 0, "live heap loaded read");
    assertTrue(r.get("rss_kib_at_rest").asLong() > r.get("heap_kib_at_rest").asLong() / 2);
    assertTrue(r.get("mem_kib_per_run").asDouble() >= r.get("rss_kib_per_run").asDouble(),
        "heap growth counted beside resident growth");
    assertEquals(0, r.get("duplicates").asLong());
    assertEquals(0, r.get("corrupted").asLong());
    assertEquals(0, r.get("reordered").asLong());
    assertEquals(0, r.get("subscribe_errors").asLong());
    assertEquals(0, r.get("publish_errors").asLong());
    // no live event in the window means the generator stalled (an overloaded machine): say so, not an NPE
    assertTrue(r.hasNonNull("p99_ms") && r.get("p99_ms").asDouble() > 0, () -> "no live-event latency in the"
        + " window; the generator's longest tick gap was " + r.get("loadgen_tick_gap_max_ms") + " ms");
    assertTrue(r.get("cpu_us_per_event").asDouble() > 0);
    assertTrue(r.has("resume_p50_ms"), "time to resume measured");
    assertTrue(r.has("resume_p999_ms"), "resume p99.9 measured");
    // the warm-up ran at least --warmup and at most --warmup-max, and says whether
    // the server's CPU per event had settled
    assertTrue(r.get("warmup_s").asDouble() >= 2 && r.get("warmup_s").asDouble() <= 6.5,
        "warm-up " + r.get("warmup_s"));
    assertTrue(r.has("cpu_unsettled"));
    assertTrue(r.get("warmup_cpu_us_per_event").size() >= 2, "one figure per warm-up slice");
    assertEquals(2, r.get("window_cpu_us_per_event").size(), "the 3 s window in two slices");
    assertTrue(r.get("loadgen_cpu_by_thread").has("event loops"));
    assertTrue(r.get("server_transport").asText().matches("epoll|io_uring|nio"),
        "the transport the server said it listens with: " + r.get("server_transport"));
    for (String f : new String[] {"REPORT.md", "delivered.svg", "p99.svg", "cpu-per-event.svg"}) {
      assertTrue(Files.size(dir.resolve(f)) > 100, f);
    }
    assertEquals(dir.toRealPath(), out.resolve("latest").toRealPath());
  }
}
