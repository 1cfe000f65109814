package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WarmupSlicesTest {
  private static long s(double seconds) {
    return Math.round(seconds * TimeUnit.SECONDS.toNanos(1));
  }

  @Test
  void slicesTileTheShortestWarmupInAtLeastTwoOfAtMostFiveSeconds() {
    assertEquals(s(5), WarmupSlices.sliceNs(s(20)));
    assertEquals(s(4), WarmupSlices.sliceNs(s(12)));
    assertEquals(s(1), WarmupSlices.sliceNs(s(2)), "two slices at least");
    assertEquals(s(5), WarmupSlices.sliceNs(s(10)));
  }

  @Test
  void settledWhenTheLastTwoSlicesAreWithinFivePercent() {
    WarmupSlices w = new WarmupSlices();
    w.add(60_000, 1000, 0, 0); // 60 µs/event: the JIT at work
    assertFalse(w.settled(), "one slice");
    w.add(45_000, 1000, 0, 0);
    assertFalse(w.settled(), "45 vs 60");
    w.add(43_000, 1000, 0, 0);
    assertTrue(w.settled(), "43 vs 45: 4.7%");
    w.add(40_000, 1000, 0, 0);
    assertFalse(w.settled(), "40 vs 43: 7.5%");
    assertEquals(60.0, w.cold());
    assertEquals(List.of(60.0, 45.0, 43.0, 40.0), w.figures());
    WarmupSlices thirds = new WarmupSlices();
    thirds.add(1000, 3, 0, 0);
    assertEquals(333.33, thirds.cold(), "rounded like every figure");
  }

  @Test
  void notSettledWhileTheGeneratorIsStillCompiling() {
    WarmupSlices w = new WarmupSlices();
    w.add(40_000, 1000, 0.09, 0);
    w.add(40_000, 1000, 0.05, 0);
    assertTrue(w.serverSettled());
    assertFalse(w.settled(), "the generator's JIT took 5% of its CPU");
    w.add(40_000, 1000, 0.01, 0);
    assertTrue(w.settled());
  }

  @Test
  void notSettledWhileTheServersJitTakesMoreThanItsShare() {
    WarmupSlices w = new WarmupSlices();
    w.add(40_000, 1000, 0, 0.10);
    w.add(40_000, 1000, 0, 0.067); // what C2 took of IQ-Stream's CPU 60 s after start at K = 300
    assertTrue(w.serverSettled());
    assertFalse(w.settled(), "the server's compiler threads took 6.7% of its CPU");
    assertTrue(w.why().contains("server's JIT took 6.7%"), w.why());
    w.add(40_000, 1000, 0, 0.015);
    assertTrue(w.settled());
    assertEquals("", w.why());
  }

  @Test
  void aSliceWithoutEventsNeverSettles() {
    WarmupSlices w = new WarmupSlices();
    w.add(10, 0, 0, 0);
    w.add(10, 0, 0, 0);
    assertFalse(w.settled());
    assertNull(w.cold());
    assertEquals(Arrays.asList(null, null), w.figures());
  }
}
