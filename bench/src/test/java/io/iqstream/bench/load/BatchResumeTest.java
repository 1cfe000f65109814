package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that delivers in batches whose resume id is the batch's end (Durable Streams: a data frame's messages,
 * then the control frame's offset), against the generator with every browser dropping: handed as one batch
 * ({@link Run#batchStart} / {@link Run#batchEnd}), a browser that is to drop inside a batch takes all of it and
 * resumes after it, so nothing is lost and nothing comes twice. (Without the batch, a drop in its middle left the
 * rest of the batch unread behind an offset past it: lost on reconnect.)
 */
class BatchResumeTest {
  /** Events per batch: a drop point falls inside one of them for most runs. */
  private static final int BATCH = 7;

  /** Publishes in memory; the subscriber gets every BATCH-th write's batch, resumes after the batch it names. */
  private static final class BatchingDriver implements Driver {
    private final Map<Run, Channel> subscribers = new IdentityHashMap<>();
    private final Map<Run, Integer> written = new IdentityHashMap<>();

    @Override
    public boolean idIsIndex() {
      return false;
    }

    @Override
    public boolean resumes() {
      return true;
    }

    @Override
    public Publisher openPublisher(Shard shard, Run run) {
      Publisher p = new Publisher(run) {
        @Override
        public void writeEvent(int index) {
          written.put(run, index + 1);
          if ((index + 1) % BATCH == 0 || index == RunScript.EVENTS - 1) {
            deliver(run, index + 1);
          }
        }

        @Override
        public void finish() {
          run.publisherClosed(true);
        }
      };
      shard.loop().execute(run::publisherReady);
      return p;
    }

    /** Hands the subscriber the events from its resume point up to {@code end}, in batches of BATCH. */
    private void deliver(Run run, int end) {
      Channel sub = subscribers.get(run);
      if (sub == null) {
        return;
      }
      int from = run.lastEventId() == null ? 0 : Integer.parseInt(run.lastEventId());
      while (from < end && subscribers.get(run) == sub) {
        int to = Math.min(end, (from / BATCH + 1) * BATCH);
        run.batchStart();
        for (int i = from; i < to; i++) {
          run.onEvent(sub, Integer.toString(to), Unpooled.wrappedBuffer(run.data().event(i)), System.nanoTime());
        }
        run.batchEnd(sub);
        from = to;
      }
    }

    @Override
    public void openSubscriber(Shard shard, Run run) {
      EmbeddedChannel ch = new EmbeddedChannel();
      ch.closeFuture().addListener(f -> shard.loop().execute(() -> {
        if (subscribers.get(run) == ch) {
          subscribers.remove(run);
        }
        run.onSubscriberClosed(ch);
      }));
      subscribers.put(run, ch);
      run.subscriberOpened(ch);
      run.subscriberRequestSent(System.nanoTime());
      deliver(run, written.getOrDefault(run, 0)); // catch-up from the resume point
    }
  }

  @Test
  @Timeout(60)
  void aBrowserThatDropsInsideABatchTakesItWholeAndResumesAfterIt() throws Exception {
    RunScript script = RunScript.ofLengthMs(1000);
    try (LoadGenerator gen = new LoadGenerator(Transport.NIO, 1)) {
      gen.start(new LoadGenerator.Config(new BatchingDriver(), 4, script, TimeUnit.MILLISECONDS.toNanos(1000),
          TimeUnit.MILLISECONDS.toNanos(2000), TimeUnit.SECONDS.toNanos(10), 1, List.of(), 42));
      LoadStats s = gen.await();
      assertTrue(s.reconnectingRuns > 0, "browsers dropped and resumed: " + s.reconnectingRuns);
      assertEquals(s.expected, s.delivered, "every event arrives");
      assertEquals(0, s.lostOnReconnect + s.lateOnReconnect, "none lost on reconnect");
      assertEquals(0, s.duplicates + s.reordered + s.corrupted);
    }
  }
}
