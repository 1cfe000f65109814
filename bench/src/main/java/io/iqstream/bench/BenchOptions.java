package io.iqstream.bench;

import io.iqstream.bench.server.IqStreamSetup;
import io.iqstream.bench.storm.StormOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The bench's options, parsed and validated once from the command line.
 *
 * @param runLengthMs length of one run (10 s in WORKLOAD.md); shorter compresses the schedule (tests)
 * @param warmupMaxMs the longest warm-up: it goes on past {@code warmupMs} until the server's CPU per
 *     event has settled, at most this long
 * @param serverTransports IQ-Stream's {@code --transport} values, one row each; empty: not passed
 * @param gcs IQ-Stream's named collector settings ({@link IqStreamSetup#COLLECTORS}), one row each;
 *     empty: the default flags
 * @param serverJvmOpts raw extra JVM flags for IQ-Stream, appended last
 * @param baselineJar another server jar measured beside IQ-Stream as {@code iqstream-baseline}; null: none
 * @param baselineJvmOpts raw extra JVM flags for the baseline, appended last
 * @param repeat passes over every server and level, in alternating order; each row reported is the
 *     pass with the median CPU per event
 * @param idleSubscribers idle live readers whose memory is measured once per Durable Streams server, on a fresh
 *     start after its levels ({@link IdleSubscribers}); 0: not measured
 * @param storm {@code --storm}: the reconnect storm instead of the levels ({@link ReconnectStorms}); null: not
 */
public record BenchOptions(
    List<String> servers,
    List<Integer> levels,
    long warmupMs,
    long warmupMaxMs,
    long windowMs,
    long drainMs,
    long runLengthMs,
    int serverCpus,
    boolean pin,
    String transport,
    List<String> serverTransports,
    List<String> gcs,
    List<String> serverJvmOpts,
    Path baselineJar,
    List<String> baselineJvmOpts,
    Path outDir,
    Path repo,
    int dropEvery,
    int repeat,
    List<String> nchanPublishers,
    int idleSubscribers,
    StormOptions storm,
    boolean quick,
    boolean help) {

  public static final List<String> ALL_SERVERS = List.of("iqstream", "nchan", "haproxy", "soketi",
      "mercure", "mercure-history", "centrifugo");

  /**
   * Servers measured only when named: {@code netty-floor}, the HAProxy floor's relay on Netty in IQ-Stream's JVM
   * (docs/BENCHMARK.md, "The servers"; measured in docs/bench/jvmfloor-09a2668/); {@code iqstream-traced}, IQ-Stream
   * with OpenTelemetry traces on at a 1% sampler (docs/BENCHMARK.md, "Tracing's cost"); {@code iqstream-disk},
   * IQ-Stream with ended runs on disk.
   */
  public static final List<String> EXTRA_SERVERS = List.of("netty-floor", "iqstream-disk", "iqstream-traced");

  /**
   * The Durable Streams servers, on the same workload mapped onto streams (not in the default list: they are run
   * as a group of their own, docs/BENCHMARK.md "Durable Streams").
   */
  public static final List<String> DURABLE_SERVERS = List.of("iqstream-durable", "iqstream-durable-disk",
      "iqstream-durable-always", "iqstream-durable-never", "electric-memory", "electric-wal", "durable-node");

  /** The servers the reconnect storm runs against: those that resume a reader with Last-Event-ID. */
  public static final List<String> STORM_SERVERS = List.of("iqstream", "nchan");

  /** The default longest warm-up: IQ-Stream's JIT settles after 70-115 s at K = 100 and 300 on one CPU. */
  static final long DEFAULT_WARMUP_MAX_MS = 180_000;

  public static final String USAGE = """
      Usage: ./iqstream bench [options]

      Runs the AG-UI workload (docs/BENCHMARK.md) against IQ-Stream and its peers on this machine,
      one server at a time, pinned to its CPUs; writes bench/results/<time>/results.json, REPORT.md
      and SVG charts, and points bench/results/latest at them.

        --quick               short run of every server at small loads (levels 50,100; warm-up 12s;
                              window 10s)
        --peers-smoke         the peers built from the Go module proxy (mercure, mercure-history,
                              centrifugo) for a few seconds each: 2 runs of 2 s, one browser in two
                              dropping and resuming, warm-up 2s, window 3s, drain 5s (CI runs it:
                              the peers suite of scripts/test-all.sh); other options given still
                              apply
        --servers LIST        comma list of: iqstream, nchan, haproxy (the TCP floor), soketi,
                              mercure (transport local), mercure-history (transport bolt),
                              centrifugo (default: all of these); netty-floor (the TCP floor's
                              relay on Netty, in a JVM with IQ-Stream's flags: the JVM's floor);
                              iqstream-disk (IQ-Stream with --durability disk: ended runs
                              written to disk and their memory freed);
                              iqstream-traced (IQ-Stream with traces on, a 1% sampler, OTLP/HTTP
                              to a sink in the bench); and the Durable Streams servers,
                              each run = a JSON stream: iqstream-durable (IQ-Stream's /v1/stream/,
                              streams in memory), iqstream-durable-disk (on disk, --fsync batch),
                              iqstream-durable-always, iqstream-durable-never (on disk, --fsync
                              always / never),
                              electric-memory, electric-wal (Electric's Rust server 0.1.5,
                              --durability memory / its WAL), durable-node (the Node reference
                              server 0.3.7)
        --levels LIST         concurrent runs K, comma list (default 100,300,1000,2000)
        --window DUR          measured window (default 60s); DUR takes ms, s or m
        --warmup DUR          shortest warm-up before the window (default 20s; at least one run
                              length); it goes on, in slices of about 5s, until two successive
                              slices' server CPU per event are within 5% of each other, the
                              generator's own JIT is quiet and a JVM server's compiler threads
                              took at most 2% of its CPU
        --warmup-max DUR      longest warm-up (default 180s, or 3 × --warmup if longer; --quick:
                              3 × --warmup); a row whose CPU per event had
                              not settled by then is marked (cpu_unsettled in results.json)
        --drain DUR           time after the window for late events and resumes (default 5s)
        --run-length DUR      length of one run (default 10s, as the workload says); shorter
                              compresses the schedule (for smoke tests only)
        --server-cpus N       CPUs given to the server under test (default 1); the generator gets
                              the others. IQ-Stream also runs with 2 workers on 2 CPUs when the
                              machine has 4 or more CPUs
        --no-pin              do not pin with taskset
        --transport T         generator transport: auto (default: epoll, else nio), epoll, nio, io_uring
                        (io_uring's completion queue overflows at K = 1,000 here)
        --server-transport T  IQ-Stream's --transport: auto, epoll, io_uring, nio, or a comma list
                              for side-by-side rows (named e.g. iqstream[io_uring]); default: not
                              passed (the server's own default)
        --gc LIST             IQ-Stream under named collector settings, one row each (named e.g.
                              iqstream[zgc]): g1 (-XX:+UseG1GC), g1-lowpause (G1, pause target 5ms,
                              young generation 2-10% of the heap), zgc (generational), shenandoah;
                              the heap stays fixed and pre-touched. Default: the default flags
        --server-jvm-opts S   extra JVM flags for IQ-Stream, appended last (one string, split at
                              spaces)
        --baseline-jar JAR    also measure JAR (e.g. an earlier commit's server jar) right after
                              IQ-Stream, as iqstream-baseline, with the default flags: a before/after
                              pair from one run
        --baseline-jvm-opts S extra JVM flags for the baseline, appended last (e.g.
                              --sun-misc-unsafe-memory-access=warn: Unsafe off, as before it was
                              allowed)
        --drop-every N        one browser in N drops and resumes (default 10; 0 = none)
        --repeat N            measure every server at every level N times (default 1), the servers
                              in reverse order on every other pass (an IQ-Stream baseline stays
                              beside IQ-Stream); each row is the pass with the median CPU per
                              event, the others' figures in its note, every pass in passes.json.
                              This VM moves by up to 30% between two windows of the same server:
                              use 3 or more before comparing figures closer than that
        --idle-subscribers N  for each Durable Streams server, after its levels: a fresh start, N live
                              SSE readers on one stream with nothing to send, and the server's
                              memory growth ÷ N (resident memory, plus IQ-Stream's live heap)
                              (default 0: not measured)
        --storm               the reconnect storm instead of the levels (servers: iqstream, nchan;
                              default both): N readers on K runs, plus readers on calm runs never
                              cut; once all are live and a calm interval is measured, every reader
                              of the K runs is cut at once and resumes with Last-Event-ID within
                              one retry window. Reports the storm's length (until the last reader
                              has every event it missed), resume p50/p99/max, server CPU per
                              reconnect, refused/reset connections, the kernel's listen drops, the
                              calm runs' p99 calm and during the storm, lost and duplicated
        --storm-readers N     readers on the cut runs (default 2000; at most 19000 in all, over
                              127.0.0.x source addresses above 5000)
        --storm-runs K        runs cut (default 20)
        --storm-calm-runs C   runs never cut, 5 readers each (default 10)
        --storm-rate R        events a second each run publishes (default 20)
        --storm-window DUR    the reconnects spread uniformly over this (default 1s; 0: all at once)
        --storm-calm DUR      the calm interval measured before the cut (default 5s)
        --storm-warmups N     storms run first and not counted, 1 s apart (default 3: a JVM server
                              compiles its resume path on the first ones)
        --nchan-publisher P   Nchan's publisher: http (a POST per event), websocket, or both
                              (default: both at each level, the faster kept in the table and the
                              other's figures in its note)
        --out DIR             results root (default bench/results)
        --help                this text

      ./iqstream bench --paired JAR_A JAR_B [options] measures two IQ-Stream jars at the same time
      instead, for differences smaller than the VM's drift (./iqstream bench --paired --help).

      Environment: IQSTREAM_JAR (server jar; default server/target/iqstream-server.jar);
      IQSTREAM_JVM_OPTS replaces IQ-Stream's heap and collector flags (default
      """ + IqStreamSetup.DEFAULT_SIZING + """
      ); IQSTREAM_BENCH_RENICE=0 keeps the priority the bench was started with (pinned still; by
      default, as root, the bench and the servers it starts run at nice -10).
      Peers are installed on first use by bench/peers/install-*.sh (apt-get / npm / the Go module
      proxy, idempotent; Mercure and Centrifugo are built with go, a few minutes the first time).
      """;

  public static BenchOptions parse(String[] args, Path repo) {
    List<String> servers = ALL_SERVERS;
    List<Integer> levels = List.of(100, 300, 1000, 2000);
    long warmup = 20_000;
    long window = 60_000;
    long drain = 5_000;
    long runLength = 10_000;
    int serverCpus = 1;
    boolean pin = true;
    String transport = "auto";
    List<String> serverTransports = List.of();
    List<String> gcs = List.of();
    List<String> serverJvmOpts = List.of();
    Path baselineJar = null;
    List<String> baselineJvmOpts = List.of();
    Long warmupMaxSet = null;
    Path out = repo.resolve("bench/results");
    int dropEvery = 10;
    int repeat = 1;
    int idleSubscribers = 0;
    List<String> nchanPublishers = List.of("http", "websocket");
    boolean quick = false;
    boolean stormAsked = false;
    Integer stormReaders = null;
    Integer stormRuns = null;
    Integer stormCalmRuns = null;
    Integer stormRate = null;
    Long stormWindow = null;
    Long stormCalm = null;
    Integer stormWarmups = null;
    boolean peersSmoke = false;
    boolean help = false;
    Long warmupSet = null;
    Long windowSet = null;
    Long drainSet = null;
    List<Integer> levelsSet = null;
    List<String> serversSet = null;
    Long runLengthSet = null;
    Integer dropEverySet = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        v = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      switch (a) {
        case "--help", "-h" -> help = true;
        case "--quick" -> quick = true;
        case "--storm" -> stormAsked = true;
        case "--peers-smoke" -> peersSmoke = true;
        case "--no-pin" -> pin = false;
        default -> {
          if (v == null) {
            if (i + 1 >= args.length) {
              throw new IllegalArgumentException(a + " needs a value");
            }
            v = args[++i];
          }
          switch (a) {
            case "--servers" -> {
              serversSet = new ArrayList<>();
              for (String s : v.split(",")) {
                String n = s.trim().toLowerCase(Locale.ROOT);
                if (n.equals("floor") || n.equals("haproxy-floor")) {
                  n = "haproxy";
                }
                if (!ALL_SERVERS.contains(n) && !DURABLE_SERVERS.contains(n) && !EXTRA_SERVERS.contains(n)) {
                  throw new IllegalArgumentException("unknown server: " + s + " (known: "
                      + String.join(", ", ALL_SERVERS) + ", " + String.join(", ", EXTRA_SERVERS) + ", "
                      + String.join(", ", DURABLE_SERVERS) + ")");
                }
                serversSet.add(n);
              }
            }
            case "--levels" -> {
              levelsSet = new ArrayList<>();
              for (String s : v.split(",")) {
                int k = Integer.parseInt(s.trim().replace("_", ""));
                if (k < 1 || k > 9_000) {
                  throw new IllegalArgumentException("level out of range 1..9000: " + k);
                }
                levelsSet.add(k);
              }
            }
            case "--window" -> windowSet = durationMs(v);
            case "--warmup" -> warmupSet = durationMs(v);
            case "--drain" -> drainSet = durationMs(v);
            case "--run-length" -> runLengthSet = durationMs(v);
            case "--server-cpus" -> serverCpus = Integer.parseInt(v);
            case "--transport" -> transport = v;
            case "--server-transport" -> serverTransports = list(v, IqStreamSetup.TRANSPORTS,
                "server transport");
            case "--gc" -> gcs = list(v, IqStreamSetup.COLLECTOR_NAMES, "collector setting");
            case "--server-jvm-opts" -> serverJvmOpts = v.isBlank() ? List.of()
                : List.of(v.trim().split("\\s+"));
            case "--baseline-jar" -> baselineJar = Path.of(v);
            case "--baseline-jvm-opts" -> baselineJvmOpts = v.isBlank() ? List.of()
                : List.of(v.trim().split("\\s+"));
            case "--warmup-max" -> warmupMaxSet = durationMs(v);
            case "--drop-every" -> dropEverySet = Integer.parseInt(v);
            case "--repeat" -> repeat = Integer.parseInt(v);
            case "--idle-subscribers" -> {
              idleSubscribers = Integer.parseInt(v);
              if (idleSubscribers < 0 || idleSubscribers > 9_000) {
                throw new IllegalArgumentException("--idle-subscribers: 0 to 9000 (one process's sockets), not " + v);
              }
            }
            case "--out" -> out = Path.of(v);
            case "--storm-readers" -> stormReaders = Integer.parseInt(v.trim().replace("_", ""));
            case "--storm-runs" -> stormRuns = Integer.parseInt(v.trim());
            case "--storm-calm-runs" -> stormCalmRuns = Integer.parseInt(v.trim());
            case "--storm-rate" -> stormRate = Integer.parseInt(v.trim());
            case "--storm-window" -> stormWindow = durationMs(v);
            case "--storm-calm" -> stormCalm = durationMs(v);
            case "--storm-warmups" -> stormWarmups = Integer.parseInt(v.trim());
            case "--nchan-publisher" -> nchanPublishers = switch (v.trim().toLowerCase(Locale.ROOT)) {
              case "http" -> List.of("http");
              case "websocket", "ws" -> List.of("websocket");
              case "both" -> List.of("http", "websocket");
              default -> throw new IllegalArgumentException("--nchan-publisher: http, websocket or"
                  + " both, not " + v);
            };
            default -> throw new IllegalArgumentException("unknown option: " + a);
          }
        }
      }
    }
    if (quick) {
      levels = List.of(50, 100);
      warmup = 12_000;
      window = 10_000;
      drain = 4_000;
    }
    if (peersSmoke) {
      // a few whole runs of each peer with resumes in them: that each works, not what it costs
      servers = List.of("mercure", "mercure-history", "centrifugo");
      levels = List.of(2);
      runLength = 2_000;
      warmup = 2_000;
      warmupMaxSet = warmupMaxSet != null ? warmupMaxSet : Long.valueOf(2_000);
      window = 3_000;
      // Mercure local's lost events never come, so its drain always runs to the end: 2.5 run lengths
      drain = 5_000;
      dropEvery = 2;
    }
    StormOptions storm = null;
    if (stormAsked) {
      storm = StormOptions.DEFAULT.with(stormReaders, stormRuns, stormCalmRuns, stormRate, stormWindow, stormCalm,
          stormWarmups);
      servers = STORM_SERVERS;
      if (serversSet != null && !STORM_SERVERS.containsAll(serversSet)) {
        throw new IllegalArgumentException("--storm runs against " + String.join(", ", STORM_SERVERS) + " only");
      }
    } else if (stormReaders != null || stormRuns != null || stormCalmRuns != null || stormRate != null
        || stormWindow != null || stormCalm != null || stormWarmups != null) {
      throw new IllegalArgumentException("the --storm-* options need --storm");
    }
    if (serversSet != null) {
      servers = serversSet;
    }
    if (levelsSet != null) {
      levels = levelsSet;
    }
    if (runLengthSet != null) {
      runLength = runLengthSet;
    }
    if (dropEverySet != null) {
      dropEvery = dropEverySet;
    }
    if (warmupSet != null) {
      warmup = warmupSet;
    }
    if (windowSet != null) {
      window = windowSet;
    }
    if (drainSet != null) {
      drain = drainSet;
    }
    // IQ-Stream's per-connection code reaches C2 only after 70-115 s of this load on one CPU (BENCHMARK.md):
    // a shorter longest warm-up leaves its compiler in the window; --quick stays quick
    long warmupMax = warmupMaxSet != null ? warmupMaxSet
        : quick ? 3 * warmup : Math.max(DEFAULT_WARMUP_MAX_MS, 3 * warmup);
    if (warmupMax < warmup) {
      throw new IllegalArgumentException("--warmup-max must be at least --warmup");
    }
    if (window < 1000) {
      throw new IllegalArgumentException("--window must be at least 1s");
    }
    if (runLength < 500 || runLength > 60_000) {
      throw new IllegalArgumentException("--run-length must be within 500ms..60s");
    }
    if (repeat < 1 || repeat > 9) {
      throw new IllegalArgumentException("--repeat must be within 1..9");
    }
    if (serverCpus < 1) {
      throw new IllegalArgumentException("--server-cpus must be >= 1");
    }
    return new BenchOptions(List.copyOf(servers), List.copyOf(levels), warmup, warmupMax, window,
        drain, runLength, serverCpus, pin, transport, serverTransports, gcs, serverJvmOpts, baselineJar,
        baselineJvmOpts, out, repo,
        dropEvery, repeat, nchanPublishers, idleSubscribers, storm, quick, help);
  }

  /** IQ-Stream's setups to measure side by side: every transport × collector asked for. */
  public List<IqStreamSetup> iqstreamSetups() {
    List<IqStreamSetup> setups = new ArrayList<>(IqStreamSetup.combinations(serverTransports, gcs,
        serverJvmOpts));
    if (baselineJar != null) {
      setups.add(IqStreamSetup.baseline(baselineJar, baselineJvmOpts));
    }
    return setups;
  }

  /** A comma list of known names, each once, in the order given. */
  private static List<String> list(String v, List<String> known, String what) {
    List<String> out = new ArrayList<>();
    for (String s : v.split(",")) {
      String n = s.trim().toLowerCase(Locale.ROOT).replace('-', '_');
      String match = known.stream().filter(k -> k.replace('-', '_').equals(n)).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("unknown " + what + ": " + s.trim()
              + " (known: " + String.join(", ", known) + ")"));
      if (!out.contains(match)) {
        out.add(match);
      }
    }
    return List.copyOf(out);
  }

  /** "60s", "500ms", "2m", or plain milliseconds. */
  static long durationMs(String v) {
    String s = v.trim().toLowerCase(Locale.ROOT);
    if (s.endsWith("ms")) {
      return Long.parseLong(s.substring(0, s.length() - 2));
    }
    if (s.endsWith("s")) {
      return Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 1000);
    }
    if (s.endsWith("m")) {
      return Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 60_000);
    }
    return Long.parseLong(s);
  }
}
