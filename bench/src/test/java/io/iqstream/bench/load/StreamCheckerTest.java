package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

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
}
