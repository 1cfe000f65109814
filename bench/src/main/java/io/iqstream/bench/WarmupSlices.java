package io.iqstream.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * When the warm-up may end: the server's CPU per event, measured in successive slices of the warm-up,
 * has settled once two successive slices are within {@link #TOLERANCE} of each other. A server
 * restarted for every level is still compiling its hot path (the JIT) in its first tens of seconds,
 * when its CPU per event is up to 1.5× the steady state's; a window that opens then measures the
 * compiler. Runner's thread.
 */
final class WarmupSlices {
  /** Two successive slices within 5% of each other (of the smaller) count as settled. */
  static final double TOLERANCE = 0.05;
  /** The longest slice. */
  static final long MAX_SLICE_NS = TimeUnit.SECONDS.toNanos(5);

  private final List<Double> cpuUsPerEvent = new ArrayList<>();

  /**
   * The slice length for a shortest warm-up of {@code warmupMinNs}: at most {@link #MAX_SLICE_NS},
   * and slices tile the shortest warm-up exactly (at least two), so the first check falls on its end.
   */
  static long sliceNs(long warmupMinNs) {
    long n = Math.max(2, (warmupMinNs + MAX_SLICE_NS - 1) / MAX_SLICE_NS);
    return warmupMinNs / n;
  }

  /** Adds one slice: the server's CPU time in it and the events received in it. */
  void add(long cpuMicros, long events) {
    cpuUsPerEvent.add(events <= 0 ? null : cpuMicros / (double) events);
  }

  /** Whether the last two slices carry events and are within {@link #TOLERANCE} of each other. */
  boolean settled() {
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

  /** CPU µs per event of the first slice (the cold start), null if it had no events. */
  Double cold() {
    return cpuUsPerEvent.isEmpty() ? null : cpuUsPerEvent.get(0);
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
