package io.iqstream.bench;

import io.iqstream.bench.load.Transport;
import io.iqstream.bench.report.StormReport;
import io.iqstream.bench.report.StormRow;
import io.iqstream.bench.server.Placement;
import io.iqstream.bench.server.ProcTree;
import io.iqstream.bench.server.ServerUnderTest;
import io.iqstream.bench.storm.ListenQueue;
import io.iqstream.bench.storm.Storm;
import io.iqstream.bench.storm.StormOptions;
import io.iqstream.bench.storm.StormProtocol;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * {@code ./iqstream bench --storm}: the reconnect storm ({@link Storm}) against each server in turn, on a fresh
 * start pinned to its CPUs as the levels are, the servers in reverse order on every other {@code --repeat} pass.
 * Around the cut it reads the server's CPU time (/proc, its whole process tree) and the kernel's listen-queue
 * counters, and writes one {@link StormRow} per server and pass into results.json and REPORT.md after each.
 * Runner's thread.
 */
final class ReconnectStorms {
  /** The longest a storm may take before its readers are counted as not resumed. */
  static final long RESUME_TIMEOUT_MS = 60_000;
  /** The pause after a warm-up storm, before the next or the calm interval. */
  static final long WARMUP_GAP_MS = 1_000;

  private ReconnectStorms() {}

  static void run(BenchRunner runner, BenchOptions options, Placement placement, int cpus, Transport transport,
      Path dir, Map<String, Object> meta) throws Exception {
    StormOptions o = options.storm();
    meta.put("storm", o);
    List<StormRow> rows = new ArrayList<>();
    Map<String, String> servers = new java.util.LinkedHashMap<>();
    for (int pass = 0; pass < options.repeat(); pass++) {
      List<String> order = new ArrayList<>(options.servers());
      if (pass % 2 == 1) {
        Collections.reverse(order);
      }
      for (String name : order) {
        ServerUnderTest server = runner.newServer(name, io.iqstream.bench.server.IqStreamSetup.DEFAULT);
        StormRow row;
        try {
          server.install();
          row = measure(server, o, placement, cpus, transport, pass + 1);
          servers.put(server.name(), server.description());
        } catch (Exception e) {
          BenchRunner.log("%s storm failed: %s", name, e);
          row = StormRow.failed(name, pass + 1, o, String.valueOf(e.getMessage()));
        } finally {
          Path logs = dir.resolve("logs");
          Files.createDirectories(logs);
          server.saveOutput(logs.resolve(name + "-storm-pass" + (pass + 1) + ".log"));
          server.close();
        }
        rows.add(row);
        StormReport.write(dir, meta, servers, rows);
      }
    }
  }

  static StormRow measure(ServerUnderTest server, StormOptions o, Placement placement, int cpus, Transport transport,
      int pass) throws Exception {
    StormProtocol protocol = (StormProtocol) server.start(placement, cpus, null);
    Storm.Config config = new Storm.Config(o.readers(), o.cutRuns(), o.calmRuns(), o.calmReadersPerRun(),
        o.eventsPerSec(), o.windowMs(), o.windowMs() > 0 ? o.windowMs() : 1_000, 0x5707L + pass);
    try (Storm storm = new Storm(protocol, config, transport)) {
      BenchRunner.log("%s storm: %d readers on %d runs (+ %d calm runs of %d), %d events/s a run, window %d ms",
          server.name(), o.readers(), o.cutRuns(), o.calmRuns(), o.calmReadersPerRun(), o.eventsPerSec(),
          o.windowMs());
      storm.start(60_000);
      for (int i = 1; i <= o.warmupStorms(); i++) {
        // not measured: a JVM server compiles its accept and resume paths on the first storms (Nchan is C)
        storm.cut();
        boolean warm = storm.awaitResumed(RESUME_TIMEOUT_MS);
        BenchRunner.log("  warm-up storm %d of %d: %s", i, o.warmupStorms(), warm ? "all resumed" : "NOT all resumed");
        Thread.sleep(WARMUP_GAP_MS);
      }
      List<Long> pids = ProcTree.withDescendants(server.pid());
      storm.calm();
      long calmCpu0 = ProcTree.cpuMicros(pids);
      long calmEvents0 = storm.received();
      long calm0 = System.nanoTime();
      Thread.sleep(o.calmMs());
      long calmCpu1 = ProcTree.cpuMicros(pids);
      long calmEvents1 = storm.received();
      long calm1 = System.nanoTime();
      ListenQueue queue0 = ListenQueue.read();
      storm.cut();
      boolean all = storm.awaitResumed(RESUME_TIMEOUT_MS);
      long stormCpu1 = ProcTree.cpuMicros(pids);
      long stormEvents = storm.received() - calmEvents1;
      ListenQueue queue = ListenQueue.read().since(queue0);
      Storm.Tally t = storm.finish(15_000);
      if (!server.isAlive()) {
        throw new IllegalStateException(server.name() + " died during the storm");
      }
      // what the storm cost beyond delivering the same events live: the calm CPU per event received, times the
      // events received over the storm (the cut readers' replays included), taken from the storm's CPU
      double calmUsPerEvent = (calmCpu1 - calmCpu0) / (double) Math.max(1, calmEvents1 - calmEvents0);
      double stormCpuUs = stormCpu1 - calmCpu1;
      double excessUs = stormCpuUs - calmUsPerEvent * stormEvents;
      StormRow row = new StormRow(server.name(), pass, o.readers(), o.cutRuns(), o.calmRuns() * o.calmReadersPerRun(),
          o.eventsPerSec(), o.windowMs(), t.cut, t.resumed, all, ms(t.stormNs),
          pct(t.resumeNs, 50), pct(t.resumeNs, 99), max(t.resumeNs),
          round(excessUs / Math.max(1, t.cut), 1), round(stormCpuUs / 1000, 1),
          round((calmCpu1 - calmCpu0) / 1e3 / ((calm1 - calm0) / 1e6) / cpus, 3),
          t.refused, t.reset, t.notOk, queue.overflows(), queue.drops(),
          pct(t.calmLatencyNs, 50), pct(t.calmLatencyNs, 99), pct(t.stormLatencyNs, 50), pct(t.stormLatencyNs, 99),
          t.expected, t.delivered, t.lost, t.late, t.duplicates, t.publisherFailures,
          t.retryMsMax < 0 ? null : t.retryMsMin + "-" + t.retryMsMax, pct(t.connectNs, 50), pct(t.connectNs, 99),
          null);
      BenchRunner.log("%s storm: %d of %d resumed in %s ms (resume p50 %s p99 %s max %s ms), CPU %s µs a reconnect,"
              + " refused %d reset %d, listen overflows %d drops %d; calm runs p99 %s ms calm, %s ms in the storm;"
              + " lost %d (late %d), duplicated %d of %d delivered (%d expected)", server.name(), t.resumed, t.cut,
          row.stormMs(), row.resumeP50Ms(), row.resumeP99Ms(), row.resumeMaxMs(), row.cpuUsPerReconnect(),
          t.refused, t.reset, queue.overflows(), queue.drops(), row.calmP99Ms(), row.stormP99Ms(), t.lost,
          t.late, t.duplicates, t.delivered, t.expected);
      BenchRunner.log("  connect (due to established) p50 %s p99 %s max %s ms; retry: values sent %s ms",
          pct(t.connectNs, 50), pct(t.connectNs, 99), max(t.connectNs), row.retryMs());
      return row;
    }
  }

  private static Double ms(long ns) {
    return round(ns / 1e6, 1);
  }

  private static Double pct(Histogram h, double p) {
    return h.getTotalCount() == 0 ? null : round(h.getValueAtPercentile(p) / 1e6, 2);
  }

  private static Double max(Histogram h) {
    return h.getTotalCount() == 0 ? null : round(h.getMaxValue() / 1e6, 2);
  }

  private static double round(double v, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }
}
