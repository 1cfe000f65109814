package io.iqstream.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * When the warm-up may end: the server's CPU per event, measured in successive slices of the warm-up,
 * has settled once two successive slices are within {@link #TOLERANCE} of each other, the
 * generator's own compiler threads have gone quiet (at most {@link #GENERATOR_JIT_LIMIT} of its CPUs
 * in the last slice), and so have a JVM server's (at most {@link #SERVER_JIT_LIMIT} of its CPU time:
 * per-run and per-connection code reaches the C2 compiler's thresholds only after thousands of runs). A server restarted for every level is still compiling its hot path (the JIT)
 * in its first tens of seconds, when its CPU per event is up to 1.5× the steady state's; and the
 * generator compiles each new driver's paths on the very CPU its event loop needs (seen: its JIT
 * threads took more of its CPU than its event loop in the first window against IQ-Stream). A window
 * that opens then measures the compilers. Runner's thread.
 */
final class WarmupSlices {
  /** Two successive slices within 5% of each other (of the smaller) count as settled. */
  static final double TOLERANCE = 0.05;
  /** The longest slice. */
  static final long MAX_SLICE_NS = TimeUnit.SECONDS.toNanos(5);

  /** The generator's compiler threads may use at most 2% of its CPUs in the last slice. */
  static final double GENERATOR_JIT_LIMIT = 0.02;
  /** A JVM server's compiler threads may take at most 2% of its CPU time in the last slice. */
  static final double SERVER_JIT_LIMIT = 0.02;

  private final List<Double> cpuUsPerEvent = new ArrayList<>();
  private double lastGeneratorJitShare;
  private double lastServerJitShare;

  /**
   * The slice length for a shortest warm-up of {@code warmupMinNs}: at most {@link #MAX_SLICE_NS},
   * and slices tile the shortest warm-up exactly (at least two), so the first check falls on its end.
   */
  static long sliceNs(long warmupMinNs) {
    long n = Math.max(2, (warmupMinNs + MAX_SLICE_NS - 1) / MAX_SLICE_NS);
    return warmupMinNs / n;
  }

  /**
   * Adds one slice: the server's CPU time in it, the events received in it, and the share of the
   * generator's CPUs its compiler threads used in it.
   */
  void add(long cpuMicros, long events, double generatorJitShare, double serverJitShare) {
    cpuUsPerEvent.add(events <= 0 ? null : cpuMicros / (double) events);
    lastGeneratorJitShare = generatorJitShare;
    lastServerJitShare = serverJitShare;
  }

  /** Whether the server's CPU per event has settled and both JITs are quiet. */
  boolean settled() {
    return serverSettled() && generatorJitQuiet() && serverJitQuiet();
  }

  /**
   * Whether a JVM server's compiler threads took at most {@link #SERVER_JIT_LIMIT} of its CPU time in
   * the last slice (always true for a server that is not a JVM): code still being compiled is the
   * warm-up's cost, not the steady state's.
   */
  boolean serverJitQuiet() {
    return lastServerJitShare <= SERVER_JIT_LIMIT;
  }

  /** Why the warm-up has not settled, for the log ("" when it has). */
  String why() {
    if (!serverSettled()) {
      return " (not settled)";
    }
    if (!serverJitQuiet()) {
      return String.format(" (not settled: the server's JIT took %.1f%% of its CPU in the last slice)",
          lastServerJitShare * 100);
    }
    return generatorJitQuiet() ? "" : " (not settled: the generator's JIT still at work)";
  }

  /** Whether the generator's compiler threads used at most {@link #GENERATOR_JIT_LIMIT} last slice. */
  boolean generatorJitQuiet() {
    return lastGeneratorJitShare <= GENERATOR_JIT_LIMIT;
  }

  /** Whether the last two slices carry events and are within {@link #TOLERANCE} of each other. */
  boolean serverSettled() {
    int n = cpuUsPerEvent.size();
    if (n < 2) {
      return false;
    }
    Double a = cpuUsPerEvent.get(n - 2);
    Double b = cpuUsPerEvent.get(n - 1);
    if (a == null || b == null || a <= 0 || b <= 0) {
      return false;
    }
    return Math.abs(a - b) <= TOLERANCE * Math.min(a, b);
  }

  /** CPU µs per event of the first slice (the cold start), rounded to 0.01; null if it had no events. */
  Double cold() {
    return cpuUsPerEvent.isEmpty() ? null : figures().get(0);
  }

  /** Every slice's CPU µs per event, rounded to 0.01 (null where a slice had no events). */
  List<Double> figures() {
    List<Double> out = new ArrayList<>();
    for (Double v : cpuUsPerEvent) {
      out.add(v == null ? null : Math.round(v * 100) / 100.0);
    }
    return Collections.unmodifiableList(out);
  }
}
