package io.iqstream.bench.load;

import io.iqstream.bench.workload.RunScript;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The open-loop load generator of WORKLOAD.md: K runs in flight, each with one publisher and one
 * subscriber, over one event loop per generator thread ({@link Shard}).
 *
 * <p>Lifecycle (runner's thread): construct (makes the loops; a driver may bind listeners on them),
 * {@link #start}, wait for the window while sampling the server, {@link #await} the merged stats,
 * {@link #close}.
 */
public final class LoadGenerator implements AutoCloseable {
  /** What to generate. */
  public record Config(
      Driver driver,
      int concurrency,
      RunScript script,
      long warmupNs,
      long windowNs,
      long drainNs,
      int dropEvery,
      List<String> sourceAddresses,
      long seed) {
    public Config {
      if (concurrency < 1) {
        throw new IllegalArgumentException("concurrency must be >= 1");
      }
      if (windowNs <= 0 || warmupNs < 0 || drainNs < 0) {
        throw new IllegalArgumentException("bad durations");
      }
      sourceAddresses = List.copyOf(sourceAddresses);
    }
  }

  /** The load's times, in {@link System#nanoTime()}. */
  public record Timeline(
      long startNs, long windowStartNs, long windowEndNs, long stopNs, long epochMsBase,
      long nanoBase) {
    long epochMsAt(long nanoTime) {
      return epochMsBase + (nanoTime - nanoBase) / 1_000_000L;
    }
  }

  private final Transport transport;
  private final EventLoopGroup group;
  private final List<EventLoop> loops = new ArrayList<>();
  private final List<Promise<LoadStats>> results = new ArrayList<>();
  private final Map<EventLoop, Shard> shards = new ConcurrentHashMap<>();
  private volatile Config config;
  private volatile Timeline timeline;

  public LoadGenerator(Transport transport, int threads) {
    this.transport = transport;
    this.group = transport.newGroup(threads);
    for (int i = 0; i < threads; i++) {
      loops.add(group.next());
    }
  }

  public Transport transport() {
    return transport;
  }

  /** The generator's event loops, one per thread; a driver may bind listeners on them. */
  public List<EventLoop> loops() {
    return loops;
  }

  Config config() {
    return config;
  }

  Timeline timeline() {
    return timeline;
  }

  /** The shard that owns {@code loop}, null before {@link #start}. */
  public Shard shardOf(EventLoop loop) {
    return shards.get(loop);
  }

  /** Starts the load; returns its timeline. */
  public Timeline start(Config config) {
    this.config = config;
    long now = System.nanoTime();
    long startNs = now + TimeUnit.MILLISECONDS.toNanos(100);
    long windowStart = startNs + config.warmupNs();
    long windowEnd = windowStart + config.windowNs();
    this.timeline = new Timeline(startNs, windowStart, windowEnd, windowEnd + config.drainNs(),
        System.currentTimeMillis(), now);
    for (int i = 0; i < loops.size(); i++) {
      EventLoop loop = loops.get(i);
      Shard shard = new Shard(this, loop, i, loops.size(), config.seed());
      shards.put(loop, shard);
      Promise<LoadStats> p = loop.newPromise();
      results.add(p);
      loop.execute(() -> shard.start(p));
    }
    return timeline;
  }

  /** Events received by the subscribers since the start, every thread (any thread; approximate). */
  public long eventsReceived() {
    long n = 0;
    for (Shard s : shards.values()) {
      n += s.received();
    }
    return n;
  }

  /**
   * Moves the window to begin at {@code windowStartNs} (its length and the drain unchanged) when that
   * is earlier than planned and still to come: the warm-up ended early because the server settled.
   * Returns the timeline now in force.
   */
  public Timeline openWindowAt(long windowStartNs) {
    Timeline t = timeline;
    if (windowStartNs >= t.windowStartNs() || windowStartNs <= System.nanoTime()) {
      return t;
    }
    long windowEnd = windowStartNs + config.windowNs();
    timeline = new Timeline(t.startNs(), windowStartNs, windowEnd, windowEnd + config.drainNs(),
        t.epochMsBase(), t.nanoBase());
    for (EventLoop loop : loops) {
      Shard shard = shards.get(loop);
      loop.execute(shard::windowMoved);
    }
    return timeline;
  }

  /** Waits for the load to end and merges what every thread measured. */
  public LoadStats await() throws InterruptedException, ExecutionException, TimeoutException {
    LoadStats total = new LoadStats();
    long waitMs = Math.max(0, (timeline.stopNs() - System.nanoTime()) / 1_000_000L) + 30_000;
    for (Promise<LoadStats> p : results) {
      total.add(p.get(waitMs, TimeUnit.MILLISECONDS));
    }
    return total;
  }

  @Override
  public void close() {
    if (config != null) {
      config.driver().close();
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
