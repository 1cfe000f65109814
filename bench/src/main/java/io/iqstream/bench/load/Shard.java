package io.iqstream.bench.load;

import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One generator thread: the runs whose number {@code n ≡ index (mod shards)}, all on one event loop.
 *
 * <p>Implementation notes: a tick every millisecond starts the runs whose scheduled start has come
 * (run n starts at {@code t0 + n × runLength / K}: K runs in flight, starts spread over one run
 * length, each ending run replaced), writes every event whose scheduled time has come (runs ordered by
 * their next due time in a heap), then flushes each publisher it wrote to once. The schedule never
 * waits for the server: the generator is open-loop, and latency is measured from the schedule.
 */
public final class Shard {
  private final LoadGenerator generator;
  private final EventLoop loop;
  private final int index;
  private final int shardCount;
  private final LoadStats stats = new LoadStats();
  private final PriorityQueue<Run> due =
      new PriorityQueue<>((a, b) -> Long.compare(a.nextDueNs, b.nextDueNs));
  private final List<Run> dirty = new ArrayList<>();
  private final Map<String, Run> active = new HashMap<>();
  private final SplittableRandom random;
  private final byte[][] scratch = {new byte[16 * 1024]};
  private final Bootstrap bootstrap;
  private long nextRunNumber;
  /** Runs whose schedule ends inside the window and that are not complete yet. */
  private int openWindowRuns;
  private long localAddressCounter;
  private boolean stopping;
  private long lastTickNs;
  /** Time between the starts of successive ticks, gaps overlapping the window (1 ms when on time). */
  final org.HdrHistogram.Histogram tickGapNs = new org.HdrHistogram.Histogram(3);
  /** Events received (new, live or replayed) since the start; written by this loop, read by the runner. */
  private final java.util.concurrent.atomic.AtomicLong received =
      new java.util.concurrent.atomic.AtomicLong();
  private ScheduledFuture<?> ticker;
  private Promise<LoadStats> result;

  Shard(LoadGenerator generator, EventLoop loop, int index, int shardCount, long seed) {
    this.generator = generator;
    this.loop = loop;
    this.index = index;
    this.shardCount = shardCount;
    this.nextRunNumber = index;
    this.random = new SplittableRandom(seed + 7919L * index);
    this.bootstrap = new Bootstrap()
        .group(loop)
        .channel(generator.transport().socketChannel())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000);
  }

  public EventLoop loop() {
    return loop;
  }

  public int index() {
    return index;
  }

  public Driver driver() {
    return generator.config().driver();
  }

  public RunScript script() {
    return generator.config().script();
  }

  public LoadStats stats() {
    return stats;
  }

  public boolean stopping() {
    return stopping;
  }

  byte[][] scratch() {
    return scratch;
  }

  /**
   * Connects to {@code server} from the next local address, with {@code handlers} (new instances, one
   * connection's) as the pipeline. {@code opened} gets the channel at once; if the connect fails, it is
   * counted and {@code onFailure} runs (after {@code opened}).
   */
  public void connect(SocketAddress server, Consumer<Channel> opened, Runnable onFailure,
      ChannelHandler... handlers) {
    Bootstrap b = bootstrap.clone().handler(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(Channel ch) {
        ch.pipeline().addLast(handlers);
      }
    });
    SocketAddress local = nextLocalAddress();
    ChannelFuture f = local == null ? b.connect(server) : b.connect(server, local);
    opened.accept(f.channel());
    if (f.isDone() && !f.isSuccess()) {
      // failed before the channel was registered (no socket: e.g. out of file descriptors): its
      // listener would run on Netty's global executor, not on this loop; count it here
      connectFailed();
      onFailure.run();
      return;
    }
    f.addListener(done -> {
      if (!done.isSuccess()) {
        connectFailed();
        onFailure.run();
      }
    });
  }

  /** The next local address to connect from (spreads ports over 127.0.0.x when configured). */
  public SocketAddress nextLocalAddress() {
    List<String> sources = generator.config().sourceAddresses();
    if (sources.isEmpty()) {
      return null;
    }
    return new InetSocketAddress(sources.get((int) (localAddressCounter++ % sources.size())), 0);
  }

  /** A run in flight by id (the floor's listener uses it to pair an accepted connection). */
  public Run activeRun(String runId) {
    return active.get(runId);
  }

  void start(Promise<LoadStats> result) {
    this.result = result;
    ticker = loop.scheduleAtFixedRate(this::tick, 0, 1, TimeUnit.MILLISECONDS);
  }

  private void tick() {
    if (stopping) {
      return;
    }
    try {
      LoadGenerator.Timeline t = generator.timeline();
      long now = System.nanoTime();
      // every gap that overlaps the window, so a stall that spans the window's end (or all of it) is
      // recorded by the first tick after it
      if (lastTickNs != 0 && now >= t.windowStartNs() && lastTickNs < t.windowEndNs()) {
        tickGapNs.recordValue(now - lastTickNs);
      }
      lastTickNs = now;
      // the drain ends early once every run of the window is complete
      if (now >= t.stopNs() || (now >= t.windowEndNs() && openWindowRuns == 0)) {
        stop();
        return;
      }
      long runLengthNs = script().lengthNs();
      int k = generator.config().concurrency();
      while (true) {
        long startNs = t.startNs() + nextRunNumber * runLengthNs / k;
        if (startNs > now || startNs >= t.windowEndNs()) {
          break;
        }
        startRun(nextRunNumber, startNs);
        nextRunNumber += shardCount;
      }
      now = System.nanoTime();
      Run r;
      while ((r = due.peek()) != null && r.nextDueNs <= now) {
        due.poll();
        if (r.sendDue(now)) {
          due.add(r);
        }
        dirty.add(r);
      }
      for (int i = 0; i < dirty.size(); i++) {
        Publisher p = dirty.get(i).publisher;
        if (p != null) {
          p.flush();
        }
      }
      dirty.clear();
    } catch (Throwable e) {
      stopping = true;
      ticker.cancel(false);
      // the connections go with the failed row, not into the next server's (a leak of sockets)
      for (Run run : active.values()) {
        try {
          run.closeAll();
        } catch (RuntimeException closing) {
          e.addSuppressed(closing);
        }
      }
      active.clear();
      due.clear();
      result.tryFailure(e);
    }
  }

  private void startRun(long number, long startNs) {
    LoadGenerator.Timeline t = generator.timeline();
    RunScript script = script();
    long startEpochMs = t.epochMsAt(startNs);
    AgUiRun data = new AgUiRun(script, random, startEpochMs);
    long lastNs = startNs + script.offsetNs(RunScript.EVENTS - 1);
    boolean windowRun = lastNs >= t.windowStartNs() && lastNs < t.windowEndNs();
    int dropEvery = generator.config().dropEvery();
    int dropAt = -1;
    if (driver().resumes() && dropEvery > 0 && number % dropEvery == dropEvery - 1) {
      do {
        dropAt = 2 + random.nextInt(RunScript.EVENTS - 3);
      } while (!RunScript.insideAnswer(dropAt));
    }
    Run run = new Run(this, number, data, startNs, windowRun, dropAt);
    active.put(data.runId(), run);
    if (windowRun) {
      openWindowRuns++;
    }
    stats.runsStarted++;
    run.publisher = driver().openPublisher(this, run);
    driver().openSubscriber(this, run);
  }

  void schedule(Run run) {
    due.add(run);
  }

  void recordSend(long nowNs, long scheduledNs) {
    LoadGenerator.Timeline t = generator.timeline();
    if (nowNs >= t.windowStartNs() && nowNs < t.windowEndNs()) {
      stats.sentInWindow++;
      stats.sendLagNs.recordValue(Math.max(0, nowNs - scheduledNs));
    }
  }

  void recordReceive(long recvNs, long scheduledNs, boolean replayed) {
    // single writer: an ordered store, no read-modify-write fence per event
    received.lazySet(received.get() + 1);
    LoadGenerator.Timeline t = generator.timeline();
    if (recvNs >= t.windowStartNs() && recvNs < t.windowEndNs()) {
      stats.receivedInWindow++;
      if (replayed) {
        stats.replayedInWindow++;
      } else {
        stats.latencyNs.recordValue(Math.max(0, recvNs - scheduledNs));
      }
    }
  }

  /** Events received since the start (any thread; this loop's count, a little behind). */
  long received() {
    return received.get();
  }

  /**
   * The window moved (earlier: the warm-up settled): which runs in flight end inside it is decided
   * again. Runs complete before the new window are not touched: it starts after the call was made.
   */
  void windowMoved() {
    LoadGenerator.Timeline t = generator.timeline();
    openWindowRuns = 0;
    for (Run run : active.values()) {
      long lastNs = run.startNs + script().offsetNs(RunScript.EVENTS - 1);
      run.windowRun = lastNs >= t.windowStartNs() && lastNs < t.windowEndNs();
      if (run.windowRun) {
        openWindowRuns++;
      }
    }
  }

  /** A connection could not be made. */
  public void connectFailed() {
    if (!stopping) {
      stats.connectFailures++;
    }
  }

  void completed(Run run) {
    active.remove(run.data.runId());
    stats.runsCompleted++;
    if (run.windowRun) {
      openWindowRuns--;
    }
    run.tally(stats);
  }

  private void stop() {
    stopping = true;
    ticker.cancel(false);
    for (Run run : active.values()) {
      run.tally(stats);
      run.closeAll();
    }
    active.clear();
    due.clear();
    stats.tickGapNs.add(tickGapNs);
    result.trySuccess(stats);
  }
}
