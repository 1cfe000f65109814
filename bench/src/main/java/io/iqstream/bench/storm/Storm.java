package io.iqstream.bench.storm;

import io.iqstream.bench.load.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * A reconnect storm against one server: {@code readers} SSE readers on {@code cutRuns} runs, and a few readers on
 * {@code calmRuns} runs that are never cut; every run's backend publishes {@code eventsPerSec} events a second.
 * Once every reader is live (and after any warm-up storms, not counted: a JVM server's JIT compiles its resume path
 * on the first) and a calm interval has been measured, every reader of the cut runs loses its
 * connection at the same moment (the bench closes them all at once, as a balancer's restart does) and comes back
 * with Last-Event-ID at a moment drawn uniformly from one retry window ({@code windowMs}; 0: all at once). Each
 * event carries its run's sequence number and its send time, so the storm is checked by those numbers (0 lost,
 * 0 duplicated) and timed on one clock.
 *
 * <p>Figures: the storm's length (the cut to the moment the last reader has every event published before it
 * reconnected), each reader's resume (its request written to that moment) p50/p99/max, connections refused or
 * reset (each retried after the window, as EventSource does), and the live latency of the calm runs' readers in
 * the calm interval and while the storm lasts. The caller reads the server's CPU and the kernel's listen drops
 * around {@link #cut()} and {@link #awaitResumed}.
 *
 * <p>Implementation notes. One event loop (the publishers and every reader): a run's sequence counter and the
 * readers' state are touched on it only, so the target a reader must reach (the run's last sequence written when
 * its request is written) is exact. The runner's thread reads the counters (atomics) and the figures after the
 * readers have settled.
 */
public final class Storm implements AutoCloseable {

  /** What to run. */
  public record Config(int readers, int cutRuns, int calmRuns, int calmReadersPerRun, int eventsPerSec,
      long windowMs, long retryMs, long seed) {
    public Config {
      if (readers < cutRuns || cutRuns < 1 || calmRuns < 0 || calmReadersPerRun < 1 || eventsPerSec < 1
          || eventsPerSec > 1000 || windowMs < 0 || retryMs < 1) {
        throw new IllegalArgumentException("storm: bad config " + this);
      }
    }
  }

  /** The phase a calm reader's latency is counted in. */
  enum Phase { SETTLING, CALM, STORM, AFTER }

  /** Readers per source address (127.0.0.x): well under the ~28,000 ephemeral ports of one. */
  static final int READERS_PER_SOURCE = 5_000;

  private final StormProtocol protocol;
  private final Config config;
  private final EventLoopGroup group;
  private final EventLoop loop;
  private final Bootstrap bootstrap;
  private final Random random;
  private final List<StormRun> runs = new ArrayList<>();
  private final List<StormReader> readers = new ArrayList<>();
  private final List<Channel> publishers = new ArrayList<>();
  private final List<ScheduledFuture<?>> ticks = new ArrayList<>();
  private volatile Phase phase = Phase.SETTLING;
  private final Histogram[] liveLatencyNs = new Histogram[Phase.values().length];
  final AtomicInteger live = new AtomicInteger();
  /** Events received by every reader so far, replays included. */
  final java.util.concurrent.atomic.AtomicLong received = new java.util.concurrent.atomic.AtomicLong();
  final AtomicInteger resumed = new AtomicInteger();
  final AtomicInteger refused = new AtomicInteger();
  final AtomicInteger reset = new AtomicInteger();
  final AtomicInteger notOk = new AtomicInteger();
  final AtomicInteger publisherFailures = new AtomicInteger();
  private volatile long cutNs;
  private int cutReaders;

  public Storm(StormProtocol protocol, Config config, Transport transport) {
    this.protocol = protocol;
    this.config = config;
    this.group = transport.newGroup(1);
    this.loop = group.next();
    this.random = new Random(config.seed());
    for (int i = 0; i < liveLatencyNs.length; i++) {
      liveLatencyNs[i] = new ConcurrentHistogram(TimeUnit.SECONDS.toNanos(120), 3);
    }
    this.bootstrap = new Bootstrap().group(loop).channel(transport.socketChannel())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
        .handler(new ChannelInboundHandlerAdapter());
  }

  /** Starts the publishers and connects every reader; returns once each has its stream's first event. */
  public void start(long timeoutMs) throws InterruptedException {
    String prefix = "storm-" + Long.toHexString(config.seed() ^ System.nanoTime());
    for (int r = 0; r < config.cutRuns() + config.calmRuns(); r++) {
      runs.add(new StormRun(prefix + "-" + r, r >= config.cutRuns()));
    }
    int total = config.readers() + config.calmRuns() * config.calmReadersPerRun();
    for (int i = 0; i < config.readers(); i++) {
      readers.add(new StormReader(this, runs.get(i % config.cutRuns()), i, source(i, total)));
    }
    for (int c = 0; c < config.calmRuns(); c++) {
      for (int j = 0; j < config.calmReadersPerRun(); j++) {
        int i = readers.size();
        readers.add(new StormReader(this, runs.get(config.cutRuns() + c), i, source(i, total)));
      }
    }
    for (StormReader reader : readers) {
      reader.credential = protocol.readerCredential(reader.run.runId, "storm-reader-" + reader.index);
    }
    // the publishers first (a run exists before it is read), each at its own phase of the tick
    long periodUs = 1_000_000L / config.eventsPerSec();
    for (StormRun run : runs) {
      long offsetUs = (long) (random.nextDouble() * periodUs);
      loop.execute(() -> openPublisher(run, offsetUs, periodUs));
    }
    Thread.sleep(200);
    // readers in batches of 200 every 20 ms: the opening is not the storm
    for (int i = 0; i < readers.size(); i += 200) {
      List<StormReader> batch = readers.subList(i, Math.min(readers.size(), i + 200));
      loop.schedule(() -> batch.forEach(StormReader::connect), (i / 200) * 20L, TimeUnit.MILLISECONDS);
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (live.get() < readers.size()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("only " + live.get() + " of " + readers.size()
            + " readers got their first event in " + timeoutMs + " ms (refused " + refused.get() + ", reset "
            + reset.get() + ", not 200 " + notOk.get() + ")");
      }
      Thread.sleep(20);
    }
  }

  /** Events received by every reader so far (replays included). */
  public long received() {
    return received.get();
  }

  /**
   * Counts the calm runs' live latency as the calm interval's from now, and starts the counts of the storm to come
   * afresh (a warm-up storm before it is not counted).
   */
  public void calm() {
    for (Histogram h : liveLatencyNs) {
      h.reset();
    }
    refused.set(0);
    reset.set(0);
    notOk.set(0);
    phase = Phase.CALM;
  }

  /**
   * Closes every reader of the cut runs at once, on the loop, and schedules each one's reconnect within the window;
   * returns the moment of the cut (System.nanoTime()).
   */
  public long cut() throws InterruptedException {
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    loop.execute(() -> {
      phase = Phase.STORM;
      cutNs = System.nanoTime();
      cutReaders = 0;
      resumed.set(0);
      for (StormReader reader : readers) {
        if (!reader.run.calm) {
          cutReaders++;
          long delayUs = config.windowMs() == 0 ? 0 : (long) (random.nextDouble() * config.windowMs() * 1000);
          reader.cut(delayUs);
        }
      }
      done.countDown();
    });
    done.await();
    return cutNs;
  }

  /** Waits until every cut reader has every event published before it reconnected; false at the timeout. */
  public boolean awaitResumed(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (resumed.get() < cutReaders) {
      if (System.nanoTime() > deadline) {
        phase = Phase.AFTER;
        return false;
      }
      Thread.sleep(5);
    }
    phase = Phase.AFTER;
    return true;
  }

  /**
   * Stops the publishers and waits until every reader has its run's last event (or the timeout); then counts what
   * each got against what was published.
   */
  public Tally finish(long timeoutMs) throws InterruptedException {
    java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
    loop.execute(() -> {
      ticks.forEach(t -> t.cancel(false));
      stopped.countDown();
    });
    stopped.await();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (System.nanoTime() < deadline && !allComplete()) {
      Thread.sleep(20);
    }
    return onLoop(() -> {
      Tally t = new Tally();
      Histogram resumeNs = new Histogram(TimeUnit.SECONDS.toNanos(120), 3);
      Histogram connectNs = new Histogram(TimeUnit.SECONDS.toNanos(120), 3);
      long lastCaughtUpNs = cutNs;
      for (StormReader reader : readers) {
        int published = reader.run.published;
        t.expected += published;
        int have = reader.seen.cardinality();
        // missing below the highest event it got: the server went past them (lost); above: not there yet (late,
        // a reader still coming back when the bench stopped waiting)
        int highest = Math.min(published, reader.seen.length() - 1);
        t.lost += Math.max(0, highest - reader.seen.get(1, highest + 1).cardinality());
        t.late += Math.max(0, published - Math.max(0, highest));
        t.duplicates += reader.duplicates;
        t.delivered += have;
        if (!reader.run.calm) {
          if (reader.caughtUpNs != 0) {
            resumeNs.recordValue(Math.max(0, reader.caughtUpNs - reader.requestNs));
            connectNs.recordValue(Math.max(0, reader.requestNs - reader.dueNs));
            lastCaughtUpNs = Math.max(lastCaughtUpNs, reader.caughtUpNs);
            t.resumed++;
          }
          t.reconnects += reader.reconnects;
        }
        t.retryMsMin = Math.min(t.retryMsMin, reader.retryMs < 0 ? Long.MAX_VALUE : reader.retryMs);
        t.retryMsMax = Math.max(t.retryMsMax, reader.retryMs);
      }
      t.cut = cutReaders;
      t.stormNs = lastCaughtUpNs - cutNs;
      t.resumeNs = resumeNs;
      t.connectNs = connectNs;
      t.calmLatencyNs = liveLatencyNs[Phase.CALM.ordinal()].copy();
      t.stormLatencyNs = liveLatencyNs[Phase.STORM.ordinal()].copy();
      t.refused = refused.get();
      t.reset = reset.get();
      t.notOk = notOk.get();
      t.publisherFailures = publisherFailures.get();
      return t;
    });
  }

  /** What a storm came to, read on the loop once the readers settled. */
  public static final class Tally {
    public long expected;
    public long delivered;
    public long lost;
    public long late;
    public long duplicates;
    public int cut;
    public int resumed;
    public long reconnects;
    public long stormNs;
    public Histogram resumeNs;
    /** From the moment a reconnect was due to its connection's establishment (the client's lag, the SYN's). */
    public Histogram connectNs;
    public Histogram calmLatencyNs;
    public Histogram stormLatencyNs;
    public int refused;
    public int reset;
    public int notOk;
    public int publisherFailures;
    public long retryMsMin = Long.MAX_VALUE;
    public long retryMsMax = -1;
  }

  private boolean allComplete() {
    try {
      return onLoop(() -> {
        for (StormReader reader : readers) {
          if (reader.contiguous <= reader.run.published) {
            return false;
          }
        }
        return true;
      });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  private <T> T onLoop(java.util.concurrent.Callable<T> task) throws InterruptedException {
    try {
      return loop.submit(task).get();
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  private InetSocketAddress source(int reader, int total) {
    if (total <= READERS_PER_SOURCE) {
      return null;
    }
    return new InetSocketAddress("127.0.0." + (1 + reader / READERS_PER_SOURCE), 0);
  }

  private void openPublisher(StormRun run, long offsetUs, long periodUs) {
    ChannelFuture f = bootstrap.clone().handler(new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg); // Nchan's 201/202 per event; IQ-Stream answers at the end
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        if (phase != Phase.AFTER) {
          publisherFailures.incrementAndGet();
        }
      }
    }).connect(protocol.address());
    f.addListener(done -> {
      if (!done.isSuccess()) {
        publisherFailures.incrementAndGet();
        return;
      }
      Channel ch = f.channel();
      publishers.add(ch);
      byte[] opening = protocol.publishOpening(run.runId);
      if (opening.length > 0) {
        ch.write(Unpooled.wrappedBuffer(opening));
      }
      ticks.add(loop.scheduleAtFixedRate(() -> publish(run, ch), offsetUs, periodUs, TimeUnit.MICROSECONDS));
    });
  }

  private void publish(StormRun run, Channel ch) {
    int seq = run.published + 1;
    String type = seq == 1 ? "{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"" + run.runId + "\""
        : "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"tok \"";
    byte[] event = (type + ",\"s\":" + seq + ",\"t\":" + System.nanoTime() + "}").getBytes(StandardCharsets.UTF_8);
    ch.writeAndFlush(Unpooled.wrappedBuffer(protocol.publishEvent(run.runId, event)), ch.voidPromise());
    run.published = seq;
  }

  // ---- for the readers, on the loop

  Bootstrap bootstrap() {
    return bootstrap;
  }

  EventLoop loop() {
    return loop;
  }

  StormProtocol protocol() {
    return protocol;
  }

  Config config() {
    return config;
  }

  void liveLatency(long latencyNs) {
    liveLatencyNs[phase.ordinal()].recordValue(Math.max(0, Math.min(latencyNs, TimeUnit.SECONDS.toNanos(120))));
  }

  @Override
  public void close() {
    phase = Phase.AFTER;
    try {
      loop.submit(() -> {
        ticks.forEach(t -> t.cancel(false));
        readers.forEach(StormReader::close);
        publishers.forEach(Channel::close);
      }).get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      // closing anyway
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
