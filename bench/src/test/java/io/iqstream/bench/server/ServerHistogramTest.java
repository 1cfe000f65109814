package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ServerHistogramTest {
  /** As the server renders it (LatencyHistogram: Java's doubles, so "1.0E-4"), with a gauge around it. */
  private static String metrics(long b100us, long b250us, long b500us, long b1ms, long inf, double sum) {
    return "iqstream_runs_active 12\n"
        + "# HELP iqstream_resume_seconds From the first byte of a resuming subscriber's request.\n"
        + "# TYPE iqstream_resume_seconds histogram\n"
        + "iqstream_resume_seconds_bucket{le=\"1.0E-4\"} " + b100us + "\n"
        + "iqstream_resume_seconds_bucket{le=\"2.5E-4\"} " + b250us + "\n"
        + "iqstream_resume_seconds_bucket{le=\"5.0E-4\"} " + b500us + "\n"
        + "iqstream_resume_seconds_bucket{le=\"0.001\"} " + b1ms + "\n"
        + "iqstream_resume_seconds_bucket{le=\"+Inf\"} " + inf + "\n"
        + "iqstream_resume_seconds_sum " + sum + "\n"
        + "iqstream_resume_seconds_count " + inf + "\n"
        + "iqstream_relay_latency_seconds_count 99\n";
  }

  /** The window's own resumes are the second reading less the first: the warm-up's do not count. */
  @Test
  void theWindowsResumesAreTheDifferenceOfTwoReadings() {
    ServerHistogram before = ServerHistogram.parse(metrics(100, 300, 390, 399, 400, 0.08),
        "iqstream_resume_seconds");
    ServerHistogram after = ServerHistogram.parse(metrics(106, 316, 409, 419, 420, 0.084),
        "iqstream_resume_seconds");
    ServerHistogram window = after.since(before);
    assertEquals(20, window.count());
    assertEquals(0.004, window.sumS(), 1e-12);
    assertEquals(0.3, window.shareUnder(0.0001), 1e-12);
    assertEquals(0.8, window.shareUnder(0.00025), 1e-12);
    assertEquals("(0.1, 0.25] ms", window.medianBucket());
    assertEquals("n 20, mean 0.200 ms, median in (0.1, 0.25] ms, ≤ 0.1 ms 30%, ≤ 0.25 ms 80%, ≤ 0.5 ms 95%,"
        + " ≤ 1 ms 100%", window.describe());
  }

  @Test
  void aMedianPastTheLastBoundAndAnEmptyWindowAreSaidSo() {
    ServerHistogram slow = ServerHistogram.parse(metrics(0, 0, 1, 1, 4, 0.5), "iqstream_resume_seconds");
    assertEquals("over 1 ms", slow.medianBucket());
    ServerHistogram none = slow.since(slow);
    assertEquals("n 0", none.describe());
    assertEquals("–", none.medianBucket());
    assertThrows(IllegalArgumentException.class, () -> slow.shareUnder(0.002));
  }

  /** An older server's text (no such histogram) reads as none, not as zeros. */
  @Test
  void aServerWithoutTheHistogramReadsAsNone() {
    assertNull(ServerHistogram.parse("iqstream_runs_active 12\n", "iqstream_resume_seconds"));
  }
}
