package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StreamCheckerTest {
  private final AgUiRun run = new AgUiRun(new RunScript(1.0), new SplittableRandom(3), 0);
  private final byte[][] scratch = {new byte[16]};

  private int accept(StreamChecker c, long id, int index) {
    ByteBuf b = Unpooled.wrappedBuffer(run.event(index));
    return c.accept(id, b, scratch);
  }

  @Test
  void countsGapsDuplicatesReorderAndCorruptionById() {
    StreamChecker c = new StreamChecker(run);
    assertEquals(0, accept(c, 1, 0));
    assertEquals(1, accept(c, 2, 1));
    assertEquals(StreamChecker.DUPLICATE, accept(c, 2, 1));
    assertEquals(5, accept(c, 6, 5)); // gap 2..4
    assertEquals(3, accept(c, 4, 3)); // late: reordered
    assertEquals(StreamChecker.CORRUPTED, accept(c, 8, 6)); // id 8 but payload of event 6
    assertEquals(StreamChecker.CORRUPTED, c.accept(9, Unpooled.wrappedBuffer(new byte[] {'x'}),
        scratch));
    assertEquals(4, c.unique());
    assertEquals(1, c.duplicates());
    assertEquals(1, c.reordered());
    assertEquals(2, c.corrupted());
    assertEquals(RunScript.EVENTS - 4, c.missing());
  }

  @Test
  void identifiesEventsByPayloadWhenIdsAreNotPositions() {
    StreamChecker c = new StreamChecker(run);
    for (int i = 0; i < RunScript.EVENTS; i++) {
      if (i != 100) {
        assertEquals(i, accept(c, -1, i));
      }
    }
    assertEquals(StreamChecker.DUPLICATE, accept(c, -1, 7));
    assertEquals(100, accept(c, -1, 100));
    assertEquals(RunScript.EVENTS, c.unique());
    assertEquals(1, c.reordered());
    assertEquals(0, c.missing());
    assertEquals(StreamChecker.CORRUPTED, c.accept(-1, Unpooled.wrappedBuffer(new byte[300]),
        scratch));
  }

  /** Feeds events {@code from..to} (inclusive), by id when {@code byId}, else by payload. */
  private void feed(StreamChecker c, boolean byId, int from, int to) {
    for (int i = from; i <= to; i++) {
      assertEquals(i, accept(c, byId ? i + 1 : -1, i), "event " + i);
    }
  }

  @ParameterizedTest(name = "ids are positions: {0}")
  @ValueSource(booleans = {true, false})
  void lostOnReconnectCountsOnlyGapsBelowTheHighestEventAfterReconnecting(boolean byId) {
    StreamChecker c = new StreamChecker(run);
    feed(c, byId, 0, 99);            // first connection: 0..99
    c.reconnected();                  // the browser dropped and reconnected
    feed(c, byId, 120, 200);          // the server resumed at 120: 100..119 are gone for good
    assertEquals(StreamChecker.DUPLICATE, accept(c, byId ? 151 : -1, 150));
    // the drain ended with 201..428 not received (late, not shown lost)
    LoadStats stats = new LoadStats();
    c.tallyInto(stats, true);
    assertEquals(1, stats.windowRuns);
    assertEquals(RunScript.EVENTS, stats.expected);
    assertEquals(100 + 81, stats.delivered);
    assertEquals(1, stats.reconnectingRuns);
    assertEquals(20, stats.lostOnReconnect, "100..119: missing below 200, the highest after reconnect");
    assertEquals(RunScript.EVENTS - 201, stats.lateOnReconnect, "201..428: missing at the end");
    assertEquals(1, stats.duplicates);
    assertEquals(0, stats.reordered);
    assertEquals(0, stats.corrupted);
    assertEquals(stats.expected, stats.delivered + stats.lostOnReconnect + stats.lateOnReconnect);
  }

  @Test
  void eventsMissingOnlyAfterEverythingReceivedAreLateNotLost() {
    StreamChecker c = new StreamChecker(run);
    feed(c, true, 0, 49);
    c.reconnected();                  // reconnected, but nothing came before the drain ended
    LoadStats stats = new LoadStats();
    c.tallyInto(stats, true);
    assertEquals(0, stats.lostOnReconnect);
    assertEquals(RunScript.EVENTS - 50, stats.lateOnReconnect);
    assertEquals(-1, c.highestAfterReconnect());
  }

  @Test
  void aGapBeforeTheDropIsLostWhenLaterEventsCameAfterReconnecting() {
    StreamChecker c = new StreamChecker(run);
    feed(c, true, 0, 9);
    feed(c, true, 11, 30);            // 10 never came on the first connection
    c.reconnected();
    feed(c, true, 31, RunScript.EVENTS - 1);
    LoadStats stats = new LoadStats();
    c.tallyInto(stats, true);
    assertEquals(1, stats.lostOnReconnect);
    assertEquals(0, stats.lateOnReconnect);
    assertEquals(RunScript.EVENTS - 1, stats.delivered);
  }

  @Test
  void aRunWhoseBrowserDidNotDropCountsNoReconnectFigures() {
    StreamChecker c = new StreamChecker(run);
    feed(c, true, 0, 99);
    feed(c, true, 150, 160);
    assertEquals(StreamChecker.DUPLICATE, accept(c, 151, 150));
    assertEquals(120, accept(c, 121, 120)); // late arrival: reordered
    LoadStats stats = new LoadStats();
    c.tallyInto(stats, false);
    assertEquals(100 + 11 + 1, stats.delivered);
    assertEquals(0, stats.reconnectingRuns);
    assertEquals(0, stats.lostOnReconnect);
    assertEquals(0, stats.lateOnReconnect);
    assertEquals(1, stats.duplicates);
    assertEquals(1, stats.reordered);
  }
}
