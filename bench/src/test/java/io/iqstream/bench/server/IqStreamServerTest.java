package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class IqStreamServerTest {
  /** The server's own count beside the memory figure reads whole gauges, and says -1 for one an older server lacks. */
  @Test
  void readsGaugesFromTheMetricsTextAndMarksAMissingOne() {
    String metrics = "iqstream_runs_active_total 7\n"
        + "# HELP iqstream_runs_active Runs held in memory (open or within retention).\n"
        + "# TYPE iqstream_runs_active gauge\n"
        + "iqstream_runs_active 2081\n"
        + "iqstream_direct_memory_used_bytes 25165824\n";
    assertEquals(2081, IqStreamServer.gauge(metrics, "iqstream_runs_active"));
    assertEquals(25165824, IqStreamServer.gauge(metrics, "iqstream_direct_memory_used_bytes"));
    assertEquals(-1, IqStreamServer.gauge(metrics, "iqstream_direct_memory_active_bytes"));
  }
}
