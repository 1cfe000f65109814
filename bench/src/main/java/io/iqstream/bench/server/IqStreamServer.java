package io.iqstream.bench.server;

import io.iqstream.bench.driver.DurableStreamsDriver;
import io.iqstream.bench.driver.IqStreamDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * IQ-Stream from its shaded jar ({@code IQSTREAM_JAR}, default {@code server/target/iqstream-server.jar}),
 * on 127.0.0.1, with JWT authorization on and one worker per CPU it is given. Driven in its own run API, or
 * ({@link #durableStreams}) at its Durable Streams endpoint {@code /v1/stream/}, as the protocol's other servers.
 */
public final class IqStreamServer extends ProcessServer {
  private static final Pattern LISTENING =
      Pattern.compile("listening on http://[^:]+:(\\d+)(?: \\(([a-z_]+),)?");

  private Path jar;
  private final IqStreamSetup setup;
  private final List<String> jvmFlags;
  private final boolean durableStreams;
  /** Durable streams on disk (row iqstream-durable-disk), else in memory. */
  private final boolean onDisk;
  /** On disk, the {@code --fsync} policy passed (rows iqstream-durable-always, -never), null: the server's default. */
  private final String fsync;
  /** Traces on at a 1% sampler, exported to {@link #otlpSink} (row iqstream-traced). */
  private final boolean traced;
  /** This start's OTLP endpoint (traced only). */
  private OtlpSink otlpSink;
  /** This start's data directory. */
  private Path dataDir;
  /** Whether the jar knows {@code --durability} (false: a build from before the storage layer), read at install. */
  private boolean knowsDurability = true;
  private int workers;
  private String transportInUse;
  private JvmHeap heap;
  private int port;

  /** IQ-Stream in {@code setup}, started with {@code jvmFlags} (the setup's, built by the runner). */
  public IqStreamServer(Path jar, IqStreamSetup setup, List<String> jvmFlags) {
    this(jar, setup, jvmFlags, false, false, null, false);
  }

  private IqStreamServer(Path jar, IqStreamSetup setup, List<String> jvmFlags, boolean durableStreams,
      boolean onDisk, String fsync, boolean traced) {
    this.jar = jar;
    this.setup = setup;
    this.jvmFlags = List.copyOf(jvmFlags);
    this.durableStreams = durableStreams;
    this.onDisk = onDisk;
    this.fsync = fsync;
    this.traced = traced;
  }

  /**
   * IQ-Stream with OpenTelemetry traces on, as docs/OPERATIONS.md's production example: a 1% sampler of new traces
   * ({@code OTEL_TRACES_SAMPLER=parentbased_traceidratio}, {@code OTEL_TRACES_SAMPLER_ARG=0.01}; the bench's
   * requests carry no {@code traceparent}, so every trace is new), spans batched and exported over OTLP/HTTP to an
   * {@link OtlpSink} in the bench's JVM. Row {@code iqstream-traced}: beside {@code iqstream}, what tracing costs.
   */
  public static IqStreamServer traced(Path jar, IqStreamSetup setup, List<String> jvmFlags) {
    return new IqStreamServer(jar, setup, jvmFlags, false, false, null, true);
  }

  /** The {@code OTEL_*} variables of a traced start, exporting to {@code endpoint}. */
  static List<String> tracingEnvironment(String endpoint) {
    return List.of("OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_TRACES_SAMPLER=parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG=0.01", "OTEL_SERVICE_NAME=iqstream-bench");
  }

  /** The port it listens on (0 before start). */
  int port() {
    return port;
  }

  /** The traced start's sink (null otherwise, and before start). */
  public OtlpSink otlpSink() {
    return otlpSink;
  }

  /**
   * IQ-Stream driven at its Durable Streams endpoint ({@link DurableStreamsDriver}, a JWT per run as for its own
   * API), row {@code iqstream-durable}: the same server, the protocol the Durable Streams peers speak.
   */
  public static IqStreamServer durableStreams(Path jar, IqStreamSetup setup, List<String> jvmFlags) {
    return new IqStreamServer(jar, setup, jvmFlags, true, false, null, false);
  }

  /**
   * As {@link #durableStreams}, every stream on disk ({@code --durability disk}, {@code --fsync batch}, a fresh data
   * directory under the system's temporary folder, removed after): row {@code iqstream-durable-disk}, beside
   * Electric's WAL.
   */
  public static IqStreamServer durableStreamsOnDisk(Path jar, IqStreamSetup setup, List<String> jvmFlags) {
    return new IqStreamServer(jar, setup, jvmFlags, true, true, null, false);
  }

  /**
   * As {@link #durableStreamsOnDisk}, under {@code --fsync fsync}: {@code always} (every write flushed on its own
   * before it is answered) is row {@code iqstream-durable-always}, {@code never} (no flush: survives the process,
   * not the machine) row {@code iqstream-durable-never}: what each policy costs beside {@code batch}.
   */
  public static IqStreamServer durableStreamsOnDisk(Path jar, IqStreamSetup setup, List<String> jvmFlags,
      String fsync) {
    return new IqStreamServer(jar, setup, jvmFlags, true, true, fsync, false);
  }

  /**
   * IQ-Stream on its own API with its default durability ({@code --durability disk}: a run that ends is written
   * to a file of a fresh data directory and its memory freed a few seconds later): row {@code iqstream-disk}, the
   * memory per run in flight with ended runs on disk beside {@code iqstream}'s, where they stay in memory.
   */
  public static IqStreamServer onDisk(Path jar, IqStreamSetup setup, List<String> jvmFlags) {
    return new IqStreamServer(jar, setup, jvmFlags, false, true, null, false);
  }

  public IqStreamSetup setup() {
    return setup;
  }

  /** The transport the server said it listens with (its fallback shows here), null before start. */
  public String transportInUse() {
    return transportInUse;
  }

  /** The jar from {@code IQSTREAM_JAR}, else {@code <repo>/server/target/iqstream-server.jar}. */
  public static Path defaultJar(Path repo) {
    String env = System.getenv("IQSTREAM_JAR");
    return env != null && !env.isBlank() ? Path.of(env)
        : repo.resolve("server/target/iqstream-server.jar");
  }

  @Override
  public String name() {
    if (traced) {
      return setup.rowName().replaceFirst("^iqstream", "iqstream-traced");
    }
    if (!durableStreams) {
      return onDisk ? setup.rowName().replaceFirst("^iqstream", "iqstream-disk") : setup.rowName();
    }
    return setup.rowName().replaceFirst("^iqstream", !onDisk ? "iqstream-durable"
        : fsync == null ? "iqstream-durable-disk" : "iqstream-durable-" + fsync);
  }

  /**
   * Checks the jar and takes a private copy, so a rebuild during the bench cannot change it; asks the jar's
   * {@code serve --help} whether it knows {@code --durability}: a build from before the storage layer does not,
   * and runs as {@code iqstream} without it (it keeps every run in memory), so that such a build can be the
   * before of a pair.
   */
  @Override
  public void install() throws java.io.IOException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("no server jar at " + jar
          + " (build it with `mvn -B -q -pl server package`, or set IQSTREAM_JAR)");
    }
    Path copy = Files.createTempFile("iqstream-bench-server", ".jar");
    copy.toFile().deleteOnExit();
    Files.copy(jar, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    jar = copy;
    knowsDurability = helpNames(jar, "--durability");
    if (!knowsDurability && (durableStreams || onDisk)) {
      throw new IllegalStateException(name() + ": the server jar has no --durability (a build from before the"
          + " storage layer): only row iqstream can run it");
    }
  }

  /** Whether {@code jar}'s {@code serve --help} names {@code flag}. */
  static boolean helpNames(Path jar, String flag) throws java.io.IOException {
    Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-jar", jar.toString(),
        "serve", "--help").redirectErrorStream(true).start();
    String help = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    try {
      p.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.IOException("interrupted reading " + jar + "'s --help", e);
    }
    return help.contains(flag + " ");
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    String jwtSecret = HexFormat.of().formatHex(secret);
    workers = Math.max(1, cpus);
    List<String> cmd = new ArrayList<>();
    if (traced) {
      // the OTEL_* variables through env(1), which execs the JVM: the pid measured is still the server's
      otlpSink = OtlpSink.start();
      cmd.add("env");
      cmd.addAll(tracingEnvironment(otlpSink.endpoint()));
    }
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(jvmFlags);
    cmd.addAll(List.of("-jar", jar.toString(), "serve", "--host", "127.0.0.1", "--port", "0",
        "--jwt-secret", jwtSecret, "--workers", Integer.toString(workers)));
    if (knowsDurability) {
      // every start its own data directory: streams of an earlier start are never recovered into a measurement
      dataDir = Files.createTempDirectory("iqstream-bench-data");
      cmd.addAll(List.of("--durability", onDisk ? "disk" : "memory", "--data-dir", dataDir.toString()));
      if (fsync != null) {
        cmd.addAll(List.of("--fsync", fsync));
      }
    }
    cmd.addAll(setup.serverArgs());
    process = ServerProcess.start(cmd, placement, null, line -> LISTENING.matcher(line).find());
    String line = process.awaitReady(60_000);
    Matcher m = LISTENING.matcher(line);
    if (!m.find()) {
      throw new IllegalStateException("no port in: " + line);
    }
    transportInUse = m.group(2);
    port = Integer.parseInt(m.group(1));
    return durableStreams ? new DurableStreamsDriver("127.0.0.1", port, jwtSecret)
        : new IqStreamDriver("127.0.0.1", port, jwtSecret);
  }

  /** Live heap after a full collection, from the JVM's own counters (JMX, attached once per start). */
  @Override
  public long heapUsedKib() {
    if (process == null) {
      return -1;
    }
    try {
      if (heap == null) {
        heap = JvmHeap.attach(process.pid());
      }
      return heap.usedAfterFullGcKib();
    } catch (Exception e) {
      System.err.println("[bench] live heap of " + name() + " not read: " + e);
      return -1;
    }
  }

  /**
   * From the server's {@code /metrics}: the runs it holds (in flight, or ended and kept for {@code --retention}:
   * every run counts in the memory column, which divides by K), the budget's charge for their logs, and the buffer
   * pool's chunks and pages in use.
   */
  @Override
  public String memoryCounters() {
    if (process == null || port == 0) {
      return null;
    }
    try {
      String m = metricsText();
      return String.format(Locale.ROOT, "runs held %d (publishers %d, subscribers %d), log budget charge %.1f MiB,"
              + " pool %.1f MiB in chunks, %.1f MiB of pages in use", gauge(m, "iqstream_runs_active"),
          gauge(m, "iqstream_publishers_active"), gauge(m, "iqstream_subscribers_active"),
          gauge(m, "iqstream_memory_used_bytes") / 1048576.0,
          gauge(m, "iqstream_direct_memory_used_bytes") / 1048576.0,
          gauge(m, "iqstream_direct_memory_active_bytes") / 1048576.0);
    } catch (Exception e) {
      return "server counters not read: " + e;
    }
  }

  /** Its resume histograms now, from one reading of /metrics; null when not running, not read, or too old. */
  @Override
  public ResumeHistograms resumeHistograms() {
    if (process == null || port == 0) {
      return null;
    }
    try {
      return ResumeHistograms.parse(metricsText());
    } catch (Exception e) {
      System.err.println("[bench] resume histograms of " + name() + " not read: " + e);
      return null;
    }
  }

  private String metricsText() throws Exception {
    try (HttpClient client = HttpClient.newHttpClient()) {
      return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }
  }

  /** A gauge of the metrics text, -1 when absent (an older server). */
  static long gauge(String metrics, String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\d+)").matcher(metrics);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  @Override
  public void close() {
    if (heap != null) {
      heap.close();
      heap = null;
    }
    super.close();
    if (otlpSink != null) {
      // after the server: its SDK flushes the last batch as it shuts down
      System.err.printf(Locale.ROOT, "[bench] %s exported %d OTLP trace requests (%.1f KiB)%n", name(),
          otlpSink.exports(), otlpSink.bytes() / 1024.0);
      otlpSink.close();
      otlpSink = null;
    }
    if (dataDir != null) {
      try (java.util.stream.Stream<Path> all = Files.walk(dataDir)) {
        for (Path p : (Iterable<Path>) all.sorted(java.util.Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(p);
        }
      } catch (java.io.IOException e) {
        // a temporary folder: the system cleans it
      }
      dataDir = null;
    }
  }

  @Override
  public String description() {
    String variant = setup.describe();
    return "IQ-Stream (server jar), " + workers + " worker(s), JWT HS256 auth, "
        + (durableStreams ? "its Durable Streams endpoint /v1/stream/: a JSON stream per run, a POST per event"
            + " (keep-alive, pipelined), the last with Stream-Closed; live SSE reads resumed from the last control"
            + " event's offset; a JWT per browser naming its run's stream"
            : "chunked NDJSON publish, SSE subscribe")
        + (fsync != null ? "; streams on disk, --fsync " + fsync : durableStreams && onDisk
            ? "; streams on disk, --fsync batch" : "")
        + (knowsDurability ? "" : "; a build from before the storage layer (no --durability: runs in memory)")
        + (traced ? "; traces on (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0.01),"
            + " OTLP/HTTP to a sink in the bench's JVM" : "") + (variant.isEmpty() ? "" : "; " + variant)
        + (transportInUse == null ? "" : "; ran on " + transportInUse) + "; JVM flags: "
        + String.join(" ", jvmFlags);
  }
}
