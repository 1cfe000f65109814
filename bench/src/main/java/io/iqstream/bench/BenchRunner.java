package io.iqstream.bench;

import io.iqstream.bench.driver.DurableStreamsDriver;
import io.iqstream.bench.driver.NchanDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import io.iqstream.bench.load.LoadStats;
import io.iqstream.bench.load.Transport;
import io.iqstream.bench.report.ReportWriter;
import io.iqstream.bench.report.ResultRow;
import io.iqstream.bench.server.CentrifugoServer;
import io.iqstream.bench.server.DurableNodeServer;
import io.iqstream.bench.server.ElectricServer;
import io.iqstream.bench.server.HaproxyServer;
import io.iqstream.bench.server.IqStreamServer;
import io.iqstream.bench.server.IqStreamSetup;
import io.iqstream.bench.server.MachineCpu;
import io.iqstream.bench.server.MercureServer;
import io.iqstream.bench.server.NchanServer;
import io.iqstream.bench.server.NettyFloorServer;
import io.iqstream.bench.server.Placement;
import io.iqstream.bench.server.ProcTree;
import io.iqstream.bench.server.ResumeHistograms;
import io.iqstream.bench.server.ServerHistogram;
import io.iqstream.bench.server.ServerUnderTest;
import io.iqstream.bench.server.SoketiServer;
import io.iqstream.bench.workload.RunScript;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * The side-by-side runner: for each server and level, starts the server pinned to its CPUs, runs the
 * load (warm-up, window, drain) from the other CPUs, reads the server's CPU time and memory from /proc
 * (and a JVM server's live heap from its own counters), and writes the results folder after every
 * level (so a failure keeps what was measured). Where a server has several setups (Nchan's two
 * publishers) each is measured at each level and the faster kept.
 * Runner's (main) thread.
 */
public final class BenchRunner {
  /** Generator CPU utilisation above which a result is the generator's limit, not the server's. */
  static final double LOADGEN_CPU_LIMIT = 0.85;
  /** Send lag p99 above which the generator did not keep its schedule. */
  static final double SEND_LAG_LIMIT_MS = 10;
  /**
   * Tick gap p99.9 above which the generator's thread stalled (its tick is 1 ms): events due in a
   * stalled tick leave late whatever the server does, and a stall touching more than 0.1% of ticks
   * moves the p99.9 latency.
   */
  static final double TICK_GAP_LIMIT_MS = 10;

  private final BenchOptions options;
  private final String command;
  private final int nproc;
  private final String serverCpuList;
  private final String generatorCpuList;
  private final List<Integer> generatorCpus;
  private final int generatorThreads;
  private final Transport transport;
  private final int nice;

  public BenchRunner(BenchOptions options, String args, boolean pinSelf) throws IOException {
    this.options = options;
    this.command = "./iqstream bench" + (args.isBlank() ? "" : " " + args);
    this.nproc = Runtime.getRuntime().availableProcessors();
    this.transport = Transport.parse(options.transport());
    boolean pin = options.pin() && nproc > options.serverCpus() && hasTaskset();
    // raise the generator's priority, and so the servers' it starts (they inherit it), alike (root
    // only), so other work on a shared machine disturbs the measurement less
    // (IQSTREAM_BENCH_RENICE=0: not, on a machine shared with other work)
    this.nice = pin && pinSelf && isRoot() && !"0".equals(System.getenv("IQSTREAM_BENCH_RENICE")) ? -10 : 0;
    if (pin) {
      serverCpuList = range(0, options.serverCpus() - 1);
      // the generator's CPUs stay clear of the widest server placement (2 CPUs for IQ-Stream's
      // 2-worker run where the machine has room)
      int firstGeneratorCpu = Math.max(options.serverCpus(), twoWorkerRun(options, nproc) ? 2 : 0);
      generatorCpuList = range(firstGeneratorCpu, nproc - 1);
      generatorThreads = nproc - firstGeneratorCpu;
      generatorCpus = java.util.stream.IntStream.range(firstGeneratorCpu, nproc).boxed().toList();
      if (pinSelf) {
        exec(List.of("taskset", "-a", "-p", "-c", generatorCpuList,
            Long.toString(ProcessHandle.current().pid())));
        if (nice != 0) {
          // per thread: threads made later (the event loops) inherit it from this one
          try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
              exec(List.of("renice", "-n", Integer.toString(nice), "-p",
                  task.getFileName().toString()));
            }
          }
        }
      }
    } else {
      serverCpuList = null;
      generatorCpuList = null;
      generatorCpus = List.of();
      generatorThreads = Math.max(1, Math.min(4, nproc / 2));
    }
  }

  /** Runs everything; returns the results folder. */
  public Path run() throws Exception {
    String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC)
        .format(Instant.now());
    Path dir = options.outDir().resolve(stamp);
    Files.createDirectories(dir);
    Map<String, Object> meta = meta();
    if (options.storm() != null) {
      ReconnectStorms.run(this, options, new Placement(serverCpuList), options.serverCpus(), transport, dir, meta);
      return pointLatestAt(stamp, dir);
    }
    Map<String, String> servers = new LinkedHashMap<>();
    List<ResultRow> passRows = new ArrayList<>();
    List<ResultRow> rows = passRows;
    for (int pass = 0; pass < options.repeat(); pass++) {
      if (options.repeat() > 1) {
        log("pass %d of %d", pass + 1, options.repeat());
      }
      List<String> order = new ArrayList<>(options.servers());
      if (pass % 2 == 1) {
        // every other pass the other way round: no server always measured first (or last)
        java.util.Collections.reverse(order);
      }
      for (String name : order) {
        // IQ-Stream once per setup asked for (transport × collector), side by side
        List<IqStreamSetup> setups = new ArrayList<>(name.equals("iqstream") ? options.iqstreamSetups()
            : java.util.Collections.singletonList(null));
        if (pass % 2 == 1) {
          java.util.Collections.reverse(setups);
        }
        for (IqStreamSetup setup : setups) {
          for (int cpus : cpuCounts(name)) {
            String cpuList = serverCpuList;
            if (cpus != options.serverCpus()) {
              cpuList = range(0, cpus - 1);
            }
            runServer(name, setup, cpus, new Placement(cpuList), dir, meta, servers, passRows);
          }
        }
      }
      if (options.repeat() > 1) {
        rows = PassMedian.rows(passRows);
        ReportWriter.writePasses(dir, passRows);
      }
    }
    ReportWriter.write(dir, meta, servers, rows);
    return pointLatestAt(stamp, dir);
  }

  private Path pointLatestAt(String stamp, Path dir) throws IOException {
    Path latest = options.outDir().resolve("latest");
    Files.deleteIfExists(latest);
    Files.createSymbolicLink(latest, Path.of(stamp));
    return dir;
  }

  private List<Integer> cpuCounts(String name) {
    List<Integer> counts = new ArrayList<>(List.of(options.serverCpus()));
    // 2 workers on 2 CPUs where the machine leaves the generator at least 2 CPUs
    if (name.equals("iqstream") && serverCpuList != null && twoWorkerRun(options, nproc)) {
      counts.add(2);
    }
    return counts;
  }

  private void runServer(String name, IqStreamSetup iqSetup, int cpus, Placement placement, Path dir,
      Map<String, Object> meta, Map<String, String> servers, List<ResultRow> rows)
      throws IOException {
    // one server, or one per setup where the bench tries several and keeps the fastest (Nchan's two
    // publishers)
    List<ServerUnderTest> setups = newServers(name, iqSetup);
    String label = setups.get(0).name() + (cpus > 1 ? "-" + cpus + "cpu" : "");
    try {
      setups.get(0).install();
    } catch (Exception e) {
      log("%s: not installable here: %s", name, e.getMessage());
      servers.put(label, "not measured: " + e.getMessage());
      rows.add(ResultRow.failed(setups.get(0).name(), cpus, 0, "not installable: "
          + e.getMessage()));
      ReportWriter.write(dir, meta, servers, rows);
      return;
    }
    for (int k : options.levels()) {
      ResultRow kept = null;
      String keptDescription = null;
      String keptName = null;
      List<String> notes = new ArrayList<>();
      for (int i = 0; i < setups.size(); i++) {
        ServerUnderTest server = setups.get(i);
        String setupLabel = label + (setups.size() > 1 ? "-" + setupName(server) : "");
        ResultRow row;
        try {
          row = measure(server, cpus, placement, k);
        } catch (Exception e) {
          log("%s K=%d failed: %s", setupLabel, k, e);
          row = ResultRow.failed(server.name(), cpus, k, String.valueOf(e.getMessage()));
        } finally {
          Path logs = dir.resolve("logs");
          Files.createDirectories(logs);
          server.saveOutput(logs.resolve(setupLabel + "-K" + k + ".log"));
          server.close();
        }
        notes.add(setupName(server) + ": " + figures(row));
        if (kept == null || faster(row, kept) == row) {
          kept = row;
          keptDescription = server.description();
          keptName = setupName(server);
        }
      }
      if (setups.size() > 1) {
        kept = kept.withVariant(keptName + ", the faster of " + setups.size() + " setups measured ("
            + String.join("; ", notes) + ")");
        log("%s K=%d: kept the %s", label, k, keptName);
      }
      if (kept.error() == null) {
        servers.put(label, keptDescription);
      }
      rows.add(kept);
      ReportWriter.write(dir, meta, servers, rows);
      if (kept.error() == null && kept.deliveredRatio() < 0.5) {
        log("%s fell far behind at K=%d; higher levels skipped", name, k);
        break;
      }
    }
    if (options.idleSubscribers() > 0 && BenchOptions.DURABLE_SERVERS.contains(name)) {
      measureIdleSubscribers(setups.get(0), label, cpus, placement, dir, meta, servers, rows);
    }
  }

  /**
   * {@link IdleSubscribers} on a fresh start of {@code server}, into results.json's {@code idle_subscribers} (by
   * row name) and the report; a failure is logged and recorded there, the rows stand.
   */
  @SuppressWarnings("unchecked")
  private void measureIdleSubscribers(ServerUnderTest server, String label, int cpus, Placement placement,
      Path dir, Map<String, Object> meta, Map<String, String> servers, List<ResultRow> rows) throws IOException {
    Map<String, Object> idle = (Map<String, Object>) meta.computeIfAbsent("idle_subscribers",
        key -> new LinkedHashMap<String, Object>());
    try {
      Driver driver = server.start(placement, cpus, null);
      IdleSubscribers result = IdleSubscribers.measure(server, (DurableStreamsDriver) driver,
          options.idleSubscribers());
      log("%s: %d idle subscribers: %.2f KiB each (RSS %d -> %d KiB, live heap %d -> %d KiB, %d refused)", label,
          result.subscribers(), result.kibPerSubscriber(), result.rssKibBefore(), result.rssKibAfter(),
          result.heapKibBefore(), result.heapKibAfter(), result.refused());
      idle.put(label, result);
    } catch (Exception e) {
      log("%s: idle subscribers not measured: %s", label, e);
      idle.put(label, Map.of("error", String.valueOf(e.getMessage())));
    } finally {
      Path logs = dir.resolve("logs");
      Files.createDirectories(logs);
      server.saveOutput(logs.resolve(label + "-idle.log"));
      server.close();
    }
    ReportWriter.write(dir, meta, servers, rows);
  }

  /** What a server histogram read at the window's end observed since its reading at the start, described. */
  private static String inWindow(ServerHistogram atStart, ServerHistogram atEnd) {
    return atStart == null ? "not read at the window's start" : atEnd.since(atStart).describe();
  }

  private static String setupName(ServerUnderTest server) {
    return server instanceof NchanServer n
        ? (n.publish() == NchanDriver.Publish.WEBSOCKET ? "websocket publisher" : "HTTP POST publisher")
        : server.name();
  }

  private static String figures(ResultRow r) {
    if (r.error() != null) {
      return "failed: " + r.error();
    }
    return String.format(java.util.Locale.ROOT, "delivered %.2f%%, %.1f µs CPU/event, p99 %s ms%s",
        100 * r.deliveredRatio(), r.cpuUsPerEvent(), r.p99Ms(),
        r.loadgenLimited() ? ", generator-limited" : "");
  }

  /**
   * The faster of two measurements of one server at one level (two setups of it): a measured row over
   * a failed one; one that kept up (all delivered, generator not the limit) over one that did not;
   * of two that kept up, the lower CPU per event (the capacity left on the same CPU), then the lower
   * p99; of two that did not, the more events per second delivered.
   */
  static ResultRow faster(ResultRow a, ResultRow b) {
    if (a.error() != null || b.error() != null) {
      return a.error() != null ? b : a;
    }
    if (a.keptUp() != b.keptUp()) {
      return a.keptUp() ? a : b;
    }
    if (a.keptUp()) {
      double ca = a.cpuUsPerEvent() == null ? Double.MAX_VALUE : a.cpuUsPerEvent();
      double cb = b.cpuUsPerEvent() == null ? Double.MAX_VALUE : b.cpuUsPerEvent();
      if (ca != cb) {
        return ca < cb ? a : b;
      }
      double pa = a.p99Ms() == null ? Double.MAX_VALUE : a.p99Ms();
      double pb = b.p99Ms() == null ? Double.MAX_VALUE : b.p99Ms();
      return pa <= pb ? a : b;
    }
    return a.eventsPerSec() >= b.eventsPerSec() ? a : b;
  }

  /** IQ-Stream also runs with 2 workers on 2 CPUs where 2 or more CPUs remain for the generator. */
  private static boolean twoWorkerRun(BenchOptions options, int nproc) {
    return options.serverCpus() == 1 && nproc >= 4 && options.servers().contains("iqstream");
  }

  List<ServerUnderTest> newServers(String name, IqStreamSetup iqSetup) {
    if (name.equals("nchan")) {
      List<ServerUnderTest> setups = new ArrayList<>();
      for (String p : options.nchanPublishers()) {
        setups.add(new NchanServer(options.repo().resolve("bench/peers"), p.equals("websocket")
            ? NchanDriver.Publish.WEBSOCKET : NchanDriver.Publish.HTTP_POST));
      }
      return setups;
    }
    return List.of(newServer(name, iqSetup == null ? IqStreamSetup.DEFAULT : iqSetup));
  }

  ServerUnderTest newServer(String name, IqStreamSetup iqSetup) {
    Path repo = options.repo();
    return switch (name) {
      // the JVM flags of `./iqstream serve` (its documented production setup), with a fixed, pre-touched heap
      // so that resident memory grows with what the runs cost, not with the heap's lazy expansion;
      // IQSTREAM_JVM_OPTS replaces the sizing part, as it does for the launcher; a setup may name
      // another collector, a transport and extra flags
      case "iqstream" -> new IqStreamServer(iqSetup.baselineJar() != null ? iqSetup.baselineJar()
          : IqStreamServer.defaultJar(repo), iqSetup,
          iqstreamJvmFlags(iqSetup));
      case "iqstream-disk" -> IqStreamServer.onDisk(IqStreamServer.defaultJar(repo), iqSetup,
          iqstreamJvmFlags(iqSetup));
      // the same, with traces on at a 1% sampler (docs/BENCHMARK.md, "Tracing's cost")
      case "iqstream-traced" -> IqStreamServer.traced(IqStreamServer.defaultJar(repo), iqSetup, iqstreamJvmFlags(iqSetup));
      case "nchan" -> new NchanServer(repo.resolve("bench/peers"), NchanDriver.Publish.HTTP_POST);
      case "haproxy" -> new HaproxyServer(repo.resolve("bench/peers"));
      case "netty-floor" -> new NettyFloorServer(iqstreamJvmFlags());
      case "soketi" -> new SoketiServer(repo.resolve("bench/peers"));
      case "mercure" -> new MercureServer(repo.resolve("bench/peers"), false);
      case "mercure-history" -> new MercureServer(repo.resolve("bench/peers"), true);
      case "centrifugo" -> new CentrifugoServer(repo.resolve("bench/peers"));
      // the Durable Streams servers, one driver for all (docs/BENCHMARK.md, "Durable Streams")
      case "iqstream-durable" -> IqStreamServer.durableStreams(IqStreamServer.defaultJar(repo), iqSetup,
          iqstreamJvmFlags(iqSetup));
      case "iqstream-durable-disk" -> IqStreamServer.durableStreamsOnDisk(IqStreamServer.defaultJar(repo), iqSetup,
          iqstreamJvmFlags(iqSetup));
      // the same under the other --fsync policies (docs/BENCHMARK.md, "Durable Streams")
      case "iqstream-durable-always", "iqstream-durable-never" -> IqStreamServer.durableStreamsOnDisk(
          IqStreamServer.defaultJar(repo), iqSetup, iqstreamJvmFlags(iqSetup),
          name.substring("iqstream-durable-".length()));
      case "electric-memory" -> new ElectricServer(repo.resolve("bench/peers"), true);
      case "electric-wal" -> new ElectricServer(repo.resolve("bench/peers"), false);
      case "durable-node" -> new DurableNodeServer(repo.resolve("bench/peers"));
      default -> throw new IllegalArgumentException(name);
    };
  }

  /** IQ-Stream's JVM flags today: {@link IqStreamSetup#DEFAULT}'s (IQSTREAM_JVM_OPTS, else the default sizing). */
  static List<String> iqstreamJvmFlags() {
    return iqstreamJvmFlags(IqStreamSetup.DEFAULT);
  }

  /** IQ-Stream's JVM flags in {@code setup}, the sizing from IQSTREAM_JVM_OPTS where it is set. */
  static List<String> iqstreamJvmFlags(IqStreamSetup setup) {
    return setup.jvmFlags(System.getenv("IQSTREAM_JVM_OPTS"));
  }

  private ResultRow measure(ServerUnderTest server, int cpus, Placement placement, int k)
      throws Exception {
    if (2L * k + 200 > 19_000) {
      throw new IllegalArgumentException("K=" + k + " needs more sockets than one process may hold"
          + " (RLIMIT_NOFILE 20000); run fewer runs");
    }
    try (LoadGenerator gen = new LoadGenerator(transport, generatorThreads)) {
      Driver driver = server.start(placement, cpus, gen);
      long pid = server.pid();
      Thread.sleep(1000);
      // at rest: the live heap (a JVM server: one full collection, before the load) then resident memory
      long heapRest = server.heapUsedKib();
      long rssRest = ProcTree.rssKib(pid);
      RunScript script = RunScript.ofLengthMs(options.runLengthMs());
      List<String> sources = new ArrayList<>();
      if (k > 1000) {
        for (int i = 1; i <= 8; i++) {
          sources.add("127.0.0." + i);
        }
      }
      long warmupMinNs = TimeUnit.MILLISECONDS.toNanos(
          Math.max(options.warmupMs(), options.runLengthMs()));
      long warmupMaxNs = Math.max(warmupMinNs, TimeUnit.MILLISECONDS.toNanos(options.warmupMaxMs()));
      // the window is planned after the longest warm-up and moved earlier once the server settles
      LoadGenerator.Config config = new LoadGenerator.Config(driver, k, script, warmupMaxNs,
          TimeUnit.MILLISECONDS.toNanos(options.windowMs()),
          TimeUnit.MILLISECONDS.toNanos(options.drainMs()), options.dropEvery(), sources,
          0x5eedL + k);
      log("%s (%d CPU) K=%d: warm-up %d-%ds, window %ds", server.name(), cpus, k,
          warmupMinNs / 1_000_000_000L, warmupMaxNs / 1_000_000_000L, options.windowMs() / 1000);
      LoadGenerator.Timeline t = gen.start(config);
      WarmupSlices slices = warmUp(gen, t, ProcTree.withDescendants(pid), warmupMinNs, warmupMaxNs);
      // the server's processes, found again once (walking /proc costs the generator's CPU)
      List<Long> pids = ProcTree.withDescendants(pid);
      boolean settled = slices.settled();
      if (settled) {
        t = gen.openWindowAt(System.nanoTime() + 100_000_000L);
      }
      double warmupS = (t.windowStartNs() - t.startNs()) / 1e9;
      log("  warm-up %.1fs, server CPU µs/event per slice %s%s", warmupS, slices.figures(),
          settled ? "" : slices.why());
      // the server's own resume histogram, read before the window's CPU is counted (the request costs it some)
      ResumeHistograms resume0 = server.resumeHistograms();
      sleepUntil(t.windowStartNs());
      long cpu0 = ProcTree.cpuMicros(pids);
      long gen0 = ProcTree.selfCpuMicros();
      long genSys0 = ProcTree.selfSystemCpuMicros();
      long genPreempt0 = ProcTree.selfInvoluntarySwitches();
      MachineCpu genCpus0 = MachineCpu.read(generatorCpus);
      Map<String, Long> genThreads0 = ProcTree.selfCpuMicrosByThreadKind();
      long w0 = System.nanoTime();
      long rssMax = 0;
      // the window in 5 s slices too: how far the CPU per event moves while nothing changes but time
      List<Double> windowSlices = new ArrayList<>();
      long sliceNs = WarmupSlices.sliceNs(t.windowEndNs() - t.windowStartNs());
      long sliceEnd = t.windowStartNs() + sliceNs;
      long sliceCpu = cpu0;
      long sliceEvents = gen.eventsReceived();
      while (System.nanoTime() < t.windowEndNs()) {
        rssMax = Math.max(rssMax, ProcTree.rssKib(pids));
        sleepUntil(Math.min(sliceEnd, System.nanoTime() + 2_000_000_000L));
        if (System.nanoTime() >= sliceEnd && sliceEnd <= t.windowEndNs()) {
          long cpu = ProcTree.cpuMicros(pids);
          long events = gen.eventsReceived();
          windowSlices.add(events > sliceEvents ? round((cpu - sliceCpu) / (double) (events - sliceEvents), 2)
              : null);
          sliceCpu = cpu;
          sliceEvents = events;
          sliceEnd += sliceNs;
        }
      }
      // the tree again: processes started in the window (a respawned worker) count whole, and those
      // that ended count through the parent that reaped them
      long cpu1 = ProcTree.cpuMicros(ProcTree.withDescendants(pid));
      long gen1 = ProcTree.selfCpuMicros();
      long genSys1 = ProcTree.selfSystemCpuMicros();
      long genPreempt1 = ProcTree.selfInvoluntarySwitches();
      MachineCpu genCpus = MachineCpu.read(generatorCpus).since(genCpus0);
      Map<String, Long> genThreads1 = ProcTree.selfCpuMicrosByThreadKind();
      long w1 = System.nanoTime();
      ResumeHistograms resume1 = server.resumeHistograms();
      // loaded: the live heap with K runs in flight, read once the window's CPU time is taken (its full
      // collection falls in the drain, whose events count for delivery but not for latency or CPU)
      String counters = server.memoryCounters();
      long heapLoaded = heapRest < 0 ? -1 : server.heapUsedKib();
      LoadStats s = gen.await();
      if (!server.isAlive()) {
        throw new IllegalStateException(server.name() + " died during the load");
      }
      double windowS = (w1 - w0) / 1e9;
      IqStreamServer iq = server instanceof IqStreamServer i ? i : null;
      double serverCpuUs = cpu1 - cpu0;
      double genUtil = (gen1 - gen0) / 1e6 / windowS / generatorThreads;
      double sendLagP99 = ms(s.sendLagNs, 99);
      double tickGapP999 = ms(s.tickGapNs, 99.9);
      String limitReason = limitReason(genUtil, sendLagP99, tickGapP999);
      boolean limited = limitReason != null;
      double delivered = s.expected == 0 ? 0 : s.delivered / (double) s.expected;
      double eventsPerSec = s.receivedInWindow / windowS;
      double target = k * RunScript.EVENTS / (script.lengthNs() / 1e9);
      Long lost = s.reconnectingRuns == 0 ? null : s.lostOnReconnect;
      Long late = s.reconnectingRuns == 0 ? null : s.lateOnReconnect;
      ResultRow row = new ResultRow(server.name(), cpus, k, round(windowS, 3), s.expected,
          s.delivered, round(delivered, 5), round(eventsPerSec, 1), round(target, 1),
          s.receivedInWindow == 0 ? null : round(serverCpuUs / s.receivedInWindow, 2),
          round(serverCpuUs / 1e6 / windowS / cpus, 3),
          msOrNull(s.latencyNs, 50), msOrNull(s.latencyNs, 99), msOrNull(s.latencyNs, 99.9),
          s.latencyNs.getTotalCount() == 0 ? null : round(s.latencyNs.getMaxValue() / 1e6, 3),
          lost, late, s.reconnectingRuns, msOrNull(s.resumeNs, 50), msOrNull(s.resumeNs, 99),
          msOrNull(s.resumeNs, 99.9), s.duplicates, s.reordered, s.corrupted,
          rssMax > 0 ? round(Math.max(0, rssMax - rssRest) / (double) k, 1) : null, rssRest,
          rssMax, memKibPerRun(rssRest, rssMax, heapRest, heapLoaded, k),
          heapRest < 0 ? null : heapRest, heapLoaded < 0 ? null : heapLoaded,
          limited, limitReason, round(genUtil, 3), round(sendLagP99, 3),
          round(s.sendLagNs.getMaxValue() / 1e6, 3), round(tickGapP999, 3),
          round(s.tickGapNs.getMaxValue() / 1e6, 3), s.runsStarted, s.publishErrors,
          s.subscribeErrors, s.connectFailures, s.unexpectedDisconnects,
          gen.transport().name().toLowerCase(), iq == null ? null : iq.transportInUse(),
          iq == null ? null : iq.setup().gc(), round(warmupS, 1), !settled, slices.cold(),
          slices.figures(), windowSlices, gen1 == gen0 ? null : round((genSys1 - genSys0) / (double) (gen1 - gen0), 3),
          genCpus.totalTicks() == 0 ? null
              : round(genCpus.softirqTicks() / (double) genCpus.totalTicks(), 4),
          genCpus.totalTicks() == 0 ? null
              : round(genCpus.busyTicks() / (double) genCpus.totalTicks(), 3),
          byThreadKind(genThreads0, genThreads1, windowS * generatorThreads), fallback(iq), null);
      log("%s K=%d: delivered %.2f%% (%d/%d), %.0f ev/s of %.0f, CPU %s µs/ev (%.0f%%), p50 %s p99 %s"
              + " ms, lost %s late %s, dup %d, corrupt %d, gen CPU %.0f%% lag p99 %.1f ms%s",
          server.name(), k, 100 * delivered, s.delivered, s.expected, eventsPerSec, target,
          row.cpuUsPerEvent(), 100 * row.serverCpuUtil(), row.p50Ms(), row.p99Ms(), lost, late,
          s.duplicates, s.corrupted, 100 * genUtil, sendLagP99, limited ? " LOADGEN-LIMITED" : "");
      log("  generator ticks: p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms; send lag p50 %.2f p99.9 %.2f"
              + " max %.2f ms", ms(s.tickGapNs, 50), ms(s.tickGapNs, 99), ms(s.tickGapNs, 99.9),
          s.tickGapNs.getMaxValue() / 1e6, ms(s.sendLagNs, 50), ms(s.sendLagNs, 99.9),
          s.sendLagNs.getMaxValue() / 1e6);
      log("  generator: system time %s of its CPU, its CPUs busy %s and in softirq %s (all work on"
              + " them), preempted %.0f/s, its CPU by thread %s", row.loadgenStimeShare(),
          row.loadgenCpusBusyUtil(), row.loadgenCpusSoftirqUtil(), (genPreempt1 - genPreempt0) / windowS,
          row.loadgenCpuByThread());
      if (resume1 != null) {
        log("  resume: the generator's p50 %s / p99 %s ms (n %d); the server's own part in the window"
                + " (iqstream_resume_seconds, first byte read to the replay's flush): %s", row.resumeP50Ms(),
            row.resumeP99Ms(), row.reconnectingRuns(),
            inWindow(resume0 == null ? null : resume0.handling(), resume1.handling()));
        if (resume1.accept() != null) {
          log("  resume: before the server's part (iqstream_resume_accept_seconds, the connection's accept to the"
              + " request's first byte read): %s", inWindow(resume0 == null ? null : resume0.accept(),
              resume1.accept()));
        }
      }
      log("  memory: %s KiB/run (RSS %d -> %d KiB, live heap %d -> %d KiB)%s", row.memKibPerRun(),
          rssRest, rssMax, heapRest, heapLoaded, counters == null ? "" : "; the server's own count: " + counters);
      if (s.publishErrors + s.subscribeErrors + s.connectFailures > 0) {
        log("  errors: publish %d, subscribe %d, connect %d, unexpected disconnects %d",
            s.publishErrors, s.subscribeErrors, s.connectFailures, s.unexpectedDisconnects);
      }
      return row;
    }
  }

  /**
   * The warm-up: from the load's start, slices of {@link WarmupSlices#sliceNs} each, the server's CPU
   * time and the events received in each; it ends at the first slice end at or past the shortest
   * warm-up where the last two slices agree (the caller then opens the window), or at the longest.
   */
  private WarmupSlices warmUp(LoadGenerator gen, LoadGenerator.Timeline t, List<Long> pids,
      long warmupMinNs, long warmupMaxNs) throws InterruptedException {
    WarmupSlices slices = new WarmupSlices();
    long sliceNs = WarmupSlices.sliceNs(warmupMinNs);
    sleepUntil(t.startNs());
    long cpuPrev = ProcTree.cpuMicros(pids);
    long eventsPrev = gen.eventsReceived();
    long jitPrev = ProcTree.selfCpuMicrosByThreadKind().get("jit");
    long serverJitPrev = ProcTree.jitCpuMicros(pids);
    for (long end = t.startNs() + sliceNs; end <= t.startNs() + warmupMaxNs; end += sliceNs) {
      sleepUntil(end);
      long cpu = ProcTree.cpuMicros(pids);
      long events = gen.eventsReceived();
      long jit = ProcTree.selfCpuMicrosByThreadKind().get("jit");
      long serverJit = ProcTree.jitCpuMicros(pids);
      slices.add(cpu - cpuPrev, events - eventsPrev,
          (jit - jitPrev) / 1e3 / (sliceNs / 1e6) / generatorThreads,
          cpu > cpuPrev ? (serverJit - serverJitPrev) / (double) (cpu - cpuPrev) : 0);
      cpuPrev = cpu;
      eventsPrev = events;
      jitPrev = jit;
      serverJitPrev = serverJit;
      if (end - t.startNs() >= warmupMinNs && slices.settled()) {
        break;
      }
    }
    return slices;
  }

  /** Each thread kind's CPU between two readings ÷ {@code cpuSeconds} (the window × the CPUs). */
  static Map<String, Double> byThreadKind(Map<String, Long> before, Map<String, Long> after,
      double cpuSeconds) {
    Map<String, Double> out = new LinkedHashMap<>();
    after.forEach((kind, micros) -> out.put(kind,
        round((micros - before.getOrDefault(kind, 0L)) / 1e6 / cpuSeconds, 3)));
    return out;
  }

  /** The note of an IQ-Stream row whose server fell back from the transport asked for, else null. */
  private static String fallback(IqStreamServer iq) {
    if (iq == null || iq.setup().transport() == null || iq.setup().transport().equals("auto")
        || iq.setup().transport().equals(iq.transportInUse())) {
      return null;
    }
    return "asked for transport " + iq.setup().transport() + ", the server ran on "
        + iq.transportInUse() + " (its fallback where the kernel refuses)";
  }

  /**
   * Why a row measures the generator rather than the server, null when it does not: its CPU above
   * {@link #LOADGEN_CPU_LIMIT}, its sends late against the schedule (p99 above
   * {@link #SEND_LAG_LIMIT_MS}), or its ticks stalled (p99.9 gap above {@link #TICK_GAP_LIMIT_MS}).
   */
  static String limitReason(double generatorCpuUtil, double sendLagP99Ms, double tickGapP999Ms) {
    if (generatorCpuUtil > LOADGEN_CPU_LIMIT) {
      return "generator CPU above 85%";
    }
    if (sendLagP99Ms > SEND_LAG_LIMIT_MS) {
      return "generator sends late (p99 above 10 ms)";
    }
    if (tickGapP999Ms > TICK_GAP_LIMIT_MS) {
      return "generator ticks stalled (gap p99.9 above 10 ms)";
    }
    return null;
  }

  /**
   * Memory the runs in flight cost, per run, KiB: (resident memory loaded − at rest) + (live heap loaded
   * − at rest), ÷ K. The live heap counts for a server whose heap is fixed and pre-touched (IQ-Stream:
   * its pages are resident from the start, so its growth never shows in the RSS); -1 heap figures (other
   * servers, whose heap grows inside their RSS) add nothing. Null when the RSS was not read.
   */
  static Double memKibPerRun(long rssRestKib, long rssLoadedKib, long heapRestKib, long heapLoadedKib,
      int k) {
    if (rssLoadedKib <= 0) {
      return null;
    }
    long growthKib = Math.max(0, rssLoadedKib - rssRestKib);
    if (heapRestKib >= 0 && heapLoadedKib >= 0) {
      growthKib += Math.max(0, heapLoadedKib - heapRestKib);
    }
    return round(growthKib / (double) k, 1);
  }

  private Map<String, Object> meta() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("command", command);
    m.put("started", Instant.now().toString());
    m.put("machine", nproc + "-CPU " + (isVm() ? "VM" : "machine"));
    m.put("cpu_model", cpuModel());
    m.put("nproc", nproc);
    m.put("kernel", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    m.put("java", System.getProperty("java.version"));
    m.put("server_cpus", serverCpuList == null ? "not pinned" : serverCpuList);
    m.put("generator_cpus", generatorCpuList == null ? "not pinned" : generatorCpuList);
    m.put("generator_threads", generatorThreads);
    m.put("transport", transport.name().toLowerCase());
    m.put("nice", nice);
    m.put("warmup_s", Math.max(options.warmupMs(), options.runLengthMs()) / 1000.0);
    m.put("warmup_max_s", Math.max(options.warmupMaxMs(), options.runLengthMs()) / 1000.0);
    m.put("window_s", options.windowMs() / 1000.0);
    m.put("drain_s", options.drainMs() / 1000.0);
    m.put("run_length_s", round(RunScript.ofLengthMs(options.runLengthMs()).lengthNs() / 1e9, 3));
    m.put("drop_every", options.dropEvery());
    m.put("repeat", options.repeat());
    return m;
  }

  private static boolean isVm() {
    try {
      return Files.readString(Path.of("/proc/cpuinfo")).contains(" hypervisor");
    } catch (IOException e) {
      return false;
    }
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return "unknown";
  }

  private static boolean isRoot() {
    try {
      return Files.readString(Path.of("/proc/self/status")).lines()
          .anyMatch(l -> l.startsWith("Uid:") && l.split("\\s+")[1].equals("0"));
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean hasTaskset() {
    try {
      return new ProcessBuilder("taskset", "-V").redirectErrorStream(true).start().waitFor() == 0;
    } catch (Exception e) {
      return false;
    }
  }

  static void exec(List<String> cmd) throws IOException {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (p.waitFor() != 0) {
        throw new IOException(String.join(" ", cmd) + " failed: " + out);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  private static String range(int from, int to) {
    return from == to ? Integer.toString(from) : from + "-" + to;
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long ms;
    while ((ms = (nanoTime - System.nanoTime()) / 1_000_000L) > 0) {
      Thread.sleep(Math.min(ms, 500));
    }
  }

  private static double ms(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1e6;
  }

  private static Double msOrNull(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? null : round(h.getValueAtPercentile(percentile) / 1e6, 3);
  }

  private static double round(double v, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }

  static void log(String format, Object... args) {
    System.out.printf("[bench %s] %s%n", DateTimeFormatter.ofPattern("HH:mm:ss")
        .withZone(ZoneOffset.UTC).format(Instant.now()), String.format(format, args));
    System.out.flush();
  }
}
