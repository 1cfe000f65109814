package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.report.ResultRow;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --repeat}: each (server, CPUs, level) is reported as the pass with the median CPU per event, whole
 * (its latency and resume figures are that window's), with every pass's figures in its note; a failed pass
 * counts only where no pass was measured; a single pass is reported as it is.
 */
class PassMedianTest {
  private static ResultRow row(String server, int k, Double cpuUs, double resumeP50) {
    return new ResultRow(server, 1, k, 30, 1000, 1000, 1.0, 4290, 4290, cpuUs, 0.2, 1.0, 4.0, 8.0,
        9.0, 0L, 0L, 10, resumeP50, 2.0, 3.0, 0, 0, 0, 10.0, 1000, 2000, 10.0, null, null, false, null,
        0.4, 1.0, 2.0, 1.0, 2.0, 100, 0, 0, 0, 0, "epoll", null, null, 20.0, false, null, List.of(),
        List.of(), null, null, null, null, null, null);
  }

  @Test
  void eachGroupIsItsMedianPassWholeWithEveryPassInItsNote() {
    List<ResultRow> passes = List.of(row("iqstream", 300, 40.8, 0.42), row("nchan", 300, 39.9, 0.29),
        row("nchan", 300, 41.0, 0.31), row("iqstream", 300, 26.9, 0.38), row("iqstream", 300, 31.3, 0.35),
        row("nchan", 300, 38.0, 0.33));
    List<ResultRow> rows = PassMedian.rows(passes);
    assertEquals(2, rows.size(), "one row per server and level");
    ResultRow iq = rows.get(0);
    assertEquals("iqstream", iq.server(), "in the order the rows first appeared");
    assertEquals(31.3, iq.cpuUsPerEvent());
    assertEquals(0.35, iq.resumeP50Ms(), "the median pass's own resume figure, not a mix of passes");
    assertTrue(iq.variant().contains("median of 3 passes"), iq.variant());
    assertTrue(iq.variant().contains("40.8 µs/event, resume p50 0.42 ms; 26.9 µs/event, resume p50 0.38 ms;"
        + " 31.3 µs/event"), "every pass, in the order measured: " + iq.variant());
    assertEquals(39.9, rows.get(1).cpuUsPerEvent());
  }

  @Test
  void anEvenNumberTakesTheLowerMiddleAndAFailedPassCountsOnlyAlone() {
    List<ResultRow> rows = PassMedian.rows(List.of(row("iqstream", 100, 30.0, 0.4),
        row("iqstream", 100, 20.0, 0.5), ResultRow.failed("nchan", 1, 100, "died"),
        row("nchan", 100, 50.0, 0.3), ResultRow.failed("soketi", 1, 100, "not installable")));
    assertEquals(20.0, rows.get(0).cpuUsPerEvent());
    assertEquals(50.0, rows.get(1).cpuUsPerEvent(), "the measured pass, not the failed one");
    assertTrue(rows.get(1).variant().contains("failed; 50.0 µs/event"), rows.get(1).variant());
    assertEquals("died", PassMedian.rows(List.of(ResultRow.failed("nchan", 1, 100, "died"))).get(0).error());
    ResultRow single = row("haproxy-floor", 100, 18.0, 0.1);
    assertNull(PassMedian.rows(List.of(single)).get(0).variant(), "one pass: the row as measured");
    assertEquals("not installable", rows.get(2).error());
  }
}
