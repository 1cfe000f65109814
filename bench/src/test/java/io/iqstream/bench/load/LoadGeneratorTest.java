package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The generator against an in-process fake server (no sockets): the tally of what the subscribers got,
 * and where the send lag is taken for a publisher that queues its events.
 */
class LoadGeneratorTest {
  /** How long the fake publisher holds each event before writing it. */
  private static final long QUEUE_DELAY_MS = 40;

  /**
   * A server that is a queue: each event is written {@link #QUEUE_DELAY_MS} after the generator hands
   * it over (as Soketi's publisher waits for the previous publish), then delivered to the run's
   * subscriber at once.
   */
  private static final class QueueingDriver implements Driver {
    @Override
    public boolean idIsIndex() {
      return true;
    }

    @Override
    public boolean resumes() {
      return false;
    }

    @Override
    public Publisher openPublisher(Shard shard, Run run) {
      Publisher p = new Publisher(run) {
        @Override
        public boolean writesAtOnce() {
          return false;
        }

        @Override
        public void writeEvent(int index) {
          shard.loop().schedule(() -> {
            run.eventWritten(index, System.nanoTime());
            Channel sub = subscriberOf(run);
            run.onEvent(sub, Integer.toString(index + 1),
                Unpooled.wrappedBuffer(run.data().event(index)), System.nanoTime());
          }, QUEUE_DELAY_MS, TimeUnit.MILLISECONDS);
        }

        @Override
        public void finish() {
          shard.loop().schedule(() -> run.publisherClosed(true), QUEUE_DELAY_MS,
              TimeUnit.MILLISECONDS);
        }
      };
      shard.loop().execute(run::publisherReady);
      return p;
    }

    private final java.util.Map<Run, Channel> subscribers = new java.util.IdentityHashMap<>();

    private synchronized Channel subscriberOf(Run run) {
      return subscribers.get(run);
    }

    @Override
    public synchronized void openSubscriber(Shard shard, Run run) {
      EmbeddedChannel ch = new EmbeddedChannel();
      subscribers.put(run, ch);
      run.subscriberOpened(ch);
      run.subscriberRequestSent(System.nanoTime());
    }
  }

  @Test
  @Timeout(60)
  void sendLagOfAQueueingPublisherIsTakenAtTheWriteAndEveryEventIsTallied() throws Exception {
    RunScript script = RunScript.ofLengthMs(1000);
    try (LoadGenerator gen = new LoadGenerator(Transport.NIO, 1)) {
      LoadGenerator.Config config = new LoadGenerator.Config(new QueueingDriver(), 3, script,
          TimeUnit.MILLISECONDS.toNanos(1000), TimeUnit.MILLISECONDS.toNanos(2000),
          TimeUnit.SECONDS.toNanos(10), 0, List.of(), 42);
      gen.start(config);
      LoadStats s = gen.await();

      assertTrue(s.windowRuns >= 3, "runs ended in the window: " + s.windowRuns);
      assertEquals(s.windowRuns * RunScript.EVENTS, s.expected);
      assertEquals(s.expected, s.delivered, "every event of the fake server arrives");
      assertEquals(0, s.duplicates + s.reordered + s.corrupted);
      assertEquals(0, s.reconnectingRuns);
      assertEquals(0, s.lostOnReconnect + s.lateOnReconnect);
      assertTrue(s.sentInWindow > 0);
      // taken at the write: every event waited QUEUE_DELAY_MS in the publisher's queue (a lower
      // bound, whatever the machine's speed); taken at the hand-over it would be about 0
      long minLagMs = s.sendLagNs.getMinValue() / 1_000_000L;
      assertTrue(minLagMs >= QUEUE_DELAY_MS - 1, "send lag min " + minLagMs + " ms");
    }
  }

  /**
   * BENCHMARK.md: latency is each event's receive time minus its <em>scheduled</em> production time,
   * not minus the moment it was written (no coordinated omission). The fake server delivers each
   * event the instant it is written, and writes it {@link #QUEUE_DELAY_MS} after its schedule: from
   * the schedule every latency is at least that long (a lower bound, whatever the machine's speed);
   * measured from the write it would be about 0.
   */
  @Test
  @Timeout(60)
  void latencyIsMeasuredFromTheScheduledProductionTimeNotFromTheWrite() throws Exception {
    RunScript script = RunScript.ofLengthMs(1000);
    try (LoadGenerator gen = new LoadGenerator(Transport.NIO, 1)) {
      LoadGenerator.Config config = new LoadGenerator.Config(new QueueingDriver(), 3, script,
          TimeUnit.MILLISECONDS.toNanos(1000), TimeUnit.MILLISECONDS.toNanos(2000),
          TimeUnit.SECONDS.toNanos(10), 0, List.of(), 42);
      gen.start(config);
      LoadStats s = gen.await();

      assertTrue(s.receivedInWindow > 0, "events received in the window");
      assertEquals(s.receivedInWindow - s.replayedInWindow, s.latencyNs.getTotalCount(),
          "every live event received in the window has a latency");
      long minLatencyMs = s.latencyNs.getMinValue() / 1_000_000L;
      assertTrue(minLatencyMs >= QUEUE_DELAY_MS - 1, "latency min " + minLatencyMs + " ms: taken from"
          + " the write, not the schedule (the " + QUEUE_DELAY_MS + " ms queue is not in it)");
    }
  }

  /**
   * The generator's thread stalls from just before the window to past its end (as on an overloaded
   * machine): no tick falls inside the window, yet the stall is in the tick gaps, so the row is marked
   * as the generator's limit.
   */
  @Test
  @Timeout(60)
  void aStallOfTheGeneratorSpanningTheWholeWindowIsInItsTickGaps() throws Exception {
    RunScript script = RunScript.ofLengthMs(1000);
    long windowMs = 1000;
    try (LoadGenerator gen = new LoadGenerator(Transport.NIO, 1)) {
      LoadGenerator.Config config = new LoadGenerator.Config(new QueueingDriver(), 2, script,
          TimeUnit.MILLISECONDS.toNanos(1000), TimeUnit.MILLISECONDS.toNanos(windowMs),
          TimeUnit.SECONDS.toNanos(10), 0, List.of(), 42);
      LoadGenerator.Timeline t = gen.start(config);
      long stallFromNs = t.windowStartNs() - TimeUnit.MILLISECONDS.toNanos(100);
      long stallMs = windowMs + 300;
      // the stall itself: the loop's thread blocked (this is the fault injected, not a wait)
      gen.loops().get(0).schedule(() -> {
        long untilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(stallMs);
        while (System.nanoTime() < untilNs) {
          java.util.concurrent.locks.LockSupport.parkNanos(untilNs - System.nanoTime());
        }
      }, Math.max(0, stallFromNs - System.nanoTime()), TimeUnit.NANOSECONDS);
      LoadStats s = gen.await();
      long maxGapMs = s.tickGapNs.getMaxValue() / 1_000_000L;
      assertTrue(maxGapMs >= windowMs, "the stall is in the tick gaps: max " + maxGapMs + " ms");
      assertTrue(s.tickGapNs.getValueAtPercentile(99.9) / 1e6 > 10,
          "and so in loadgen_limited's p99.9");
    }
  }

  /**
   * The warm-up settled early: the window is moved earlier while runs are in flight. The runs whose
   * schedule now ends inside the window are counted, those already in flight included, and the load
   * ends after the moved window, not the planned one.
   */
  @Test
  @Timeout(60)
  void aWindowMovedEarlierCountsTheRunsInFlightThatEndInsideIt() throws Exception {
    RunScript script = RunScript.ofLengthMs(1000);
    try (LoadGenerator gen = new LoadGenerator(Transport.NIO, 1)) {
      LoadGenerator.Config config = new LoadGenerator.Config(new QueueingDriver(), 3, script,
          TimeUnit.SECONDS.toNanos(40), TimeUnit.MILLISECONDS.toNanos(1000),
          TimeUnit.SECONDS.toNanos(10), 0, List.of(), 42);
      LoadGenerator.Timeline planned = gen.start(config);
      // past the first run length: all three runs in flight
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (gen.eventsReceived() < 1500 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(gen.eventsReceived() >= 1500, "events counted as they arrive");
      LoadGenerator.Timeline moved = gen.openWindowAt(System.nanoTime()
          + TimeUnit.MILLISECONDS.toNanos(100));
      assertTrue(moved.windowStartNs() < planned.windowStartNs());
      assertEquals(moved.windowStartNs() + TimeUnit.MILLISECONDS.toNanos(1000),
          moved.windowEndNs(), "the window keeps its length");
      assertEquals(moved, gen.openWindowAt(planned.windowStartNs() + 1), "never moved later");
      LoadStats s = gen.await();

      assertTrue(System.nanoTime() < planned.windowStartNs(), "ended after the moved window");
      // the runs ending in the 1 s window started in the second before it, about 90% of them before
      // the move: without the recount they would not be window runs
      assertTrue(s.windowRuns >= 2, "runs ended in the moved window: " + s.windowRuns);
      assertEquals(s.windowRuns * RunScript.EVENTS, s.expected);
      assertEquals(s.expected, s.delivered);
      assertTrue(s.receivedInWindow > 0);
    }
  }
}
