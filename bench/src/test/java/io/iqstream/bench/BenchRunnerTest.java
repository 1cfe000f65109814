package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.iqstream.bench.report.ResultRow;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The runner's derived columns: when a row is the generator's limit, and memory per run. */
class BenchRunnerTest {
  @Test
  void aRowIsTheGeneratorsLimitWhenItsCpuItsSendsOrItsTicksWereLate() {
    assertNull(BenchRunner.limitReason(0.50, 2.0, 1.2));
    assertEquals("generator CPU above 85%", BenchRunner.limitReason(0.90, 2.0, 1.2));
    assertEquals("generator sends late (p99 above 10 ms)", BenchRunner.limitReason(0.5, 12, 1.2));
  }

  @Test
  void stalledGeneratorTicksAloneMakeTheRowTheGeneratorsLimit() {
    // CPU and send lag p99 fine, but 0.1% of its ticks came more than 10 ms apart (a stall of its
    // thread): the p99.9 latency of that row is the generator's
    assertEquals("generator ticks stalled (gap p99.9 above 10 ms)",
        BenchRunner.limitReason(0.40, 1.5, 35.0));
  }

  @Test
  void theGeneratorsCpuByThreadKindIsItsShareOfTheWindowOnItsCpus() {
    Map<String, Double> shares = BenchRunner.byThreadKind(Map.of("jit", 1_000_000L, "gc", 0L),
        Map.of("jit", 3_000_000L, "gc", 500_000L), 10.0);
    assertEquals(Map.of("jit", 0.2, "gc", 0.05), shares);
  }

  @Test
  void memoryPerRunCountsTheLiveHeapsGrowthBesideTheResidentMemorysGrowth() {
    // K = 100: RSS 600 -> 610 MiB (direct memory, stacks...), live heap 20 -> 50 MiB inside a
    // pre-touched heap whose pages were resident all along
    long mib = 1024;
    assertEquals((10 + 30) * mib / 100.0,
        BenchRunner.memKibPerRun(600 * mib, 610 * mib, 20 * mib, 50 * mib, 100));
  }

  @Test
  void memoryPerRunIsTheResidentGrowthAloneForServersWithoutASeparateHeap() {
    assertEquals(2048 / 4.0, BenchRunner.memKibPerRun(1000, 3048, -1, -1, 4));
    assertEquals(0.0, BenchRunner.memKibPerRun(1000, 900, -1, -1, 4), "never negative");
    assertNull(BenchRunner.memKibPerRun(1000, 0, -1, -1, 4), "RSS not read");
  }

  private static ResultRow row(double delivered, double eventsPerSec, Double cpuUs, Double p99,
      boolean limited) {
    return new ResultRow("nchan", 1, 300, 60, 1000, Math.round(1000 * delivered), delivered,
        eventsPerSec, 12_870, cpuUs, 0.5, 1.0, p99, p99, p99, 0L, 0L, 10, 1.0, 2.0, 3.0, 0, 0, 0,
        10.0, 1000, 2000, 10.0, null, null, limited, limited ? "x" : null, 0.4, 1.0, 2.0, 1.0, 2.0,
        100, 0, 0, 0, 0, "epoll", null, null, 20.0, false, null, List.of(), List.of(), null, null, null, null,
        null, null);
  }

  @Test
  void theFasterSetupIsTheOneThatKeptUpThenTheCheaperPerEventThenTheHigherThroughput() {
    ResultRow http = row(1.0, 12_860, 38.6, 3.2, false);
    ResultRow ws = row(1.0, 12_860, 27.2, 3.4, false);
    assertEquals(ws, BenchRunner.faster(http, ws), "both kept up: lower CPU per event");
    assertEquals(ws, BenchRunner.faster(ws, http));
    ResultRow behind = row(0.95, 11_000, 20.0, 900.0, false);
    assertEquals(http, BenchRunner.faster(behind, http), "kept up beats fell behind");
    ResultRow limited = row(1.0, 12_860, 10.0, 3.0, true);
    assertEquals(http, BenchRunner.faster(limited, http), "a generator-limited row did not keep up");
    ResultRow moreBehind = row(0.80, 9_000, 20.0, 900.0, false);
    assertEquals(behind, BenchRunner.faster(moreBehind, behind), "neither: more events per second");
    ResultRow failed = ResultRow.failed("nchan", 1, 300, "boom");
    assertEquals(moreBehind, BenchRunner.faster(failed, moreBehind));
    assertEquals(moreBehind, BenchRunner.faster(moreBehind, failed));
  }
}
