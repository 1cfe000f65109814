package io.iqstream.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code ./iqstream bench --paired A.jar B.jar [options]}: two IQ-Stream builds (or one build under two sets of
 * JVM flags) measured <em>at the same time</em>, each by a bench of its own — its own server and generator, both
 * servers on the server CPU, both generators on the others — so that whatever the VM does during the window
 * (it moves one window by up to 30%) happens to both. Each pair of windows is compared slice by slice (5 s each,
 * the same wall-clock slices, since both warm-ups have one fixed length). What a pair does not remove is the
 * JVM itself: two JVMs of one jar can settle up to 10–14% apart and stay there for the whole window (their JIT
 * compiled differently), so one pair is one sample of that spread and a few-percent difference needs several
 * pairs; every other pair starts B's bench first, so the start order cannot lean one way.
 *
 * <p>What it can compare: CPU per event (each server's own CPU time). The latencies are printed but are not a
 * fair comparison with the single-server rows: the two servers take turns on one CPU.
 */
final class Paired {
  static final String USAGE = """
      Usage: ./iqstream bench --paired JAR_A JAR_B [options]

      Measures two IQ-Stream server jars at the same time, each with its own bench (server and
      generator), both servers on CPU 0, so the VM's drift hits both alike; prints B's CPU per event
      as a ratio of A's, per pair of windows and slice by slice. The same jar twice with different
      --jvm-opts-a / --jvm-opts-b compares JVM flags.

        --pairs N             pairs of windows (default 4); every other pair starts B's bench
                              first. Two JVMs of the same jar settle up to 10-14% apart, so each
                              pair is one sample: a difference of a few % needs 8 or more
        --level K             concurrent runs per server (default 100; both generators share the
                              generator's CPUs, so 2 x K must fit them)
        --window DUR          measured window (default 60s)
        --warmup DUR          fixed warm-up (default 180s: long enough for the server's compiler
                              to be done with the per-connection code on one CPU; both windows
                              must open together, so it is not extended until CPU per event
                              settles)
        --drop-every N        one browser in N drops and resumes (default 10)
        --jvm-opts-a S        extra JVM flags for A's server (one string, split at spaces)
        --jvm-opts-b S        extra JVM flags for B's server
        --server-a NAME       A's bench measures NAME (default iqstream); iqstream-traced: the
                              same jar with traces on at a 1% sampler (what tracing costs:
                              --server-b iqstream-traced with the same jar twice);
                              iqstream-disk: ended runs on disk (--durability disk; what the
                              storage layer costs a run in flight: A a build from before it)
        --server-b NAME       B's bench measures NAME (default iqstream)
        --out DIR             results root (default bench/results); the pair's benches write
                              DIR/paired-<time>/pair-<n>-<A|B>/ and the summary PAIRED.md
        --run-length DUR, --drain DUR, --no-pin
                              passed to both benches as they are (for smoke tests)
      """;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The rows a bench of a pair may measure: IQ-Stream on its own API, from the pair's jar. */
  static final List<String> PAIRABLE = List.of("iqstream", "iqstream-traced", "iqstream-disk");

  private Paired() {
  }

  /** One bench's figures for its one window. */
  record Window(double cpuUsPerEvent, List<Double> slices, double p50Ms, double p99Ms, Double resumeP50Ms,
      boolean limited) {
  }

  /** B's CPU per event ÷ A's, for the whole window and slice by slice (slices where both have a figure). */
  record Ratio(double window, List<Double> slices) {
    static Ratio of(Window a, Window b) {
      List<Double> s = new ArrayList<>();
      for (int i = 0; i < Math.min(a.slices().size(), b.slices().size()); i++) {
        Double x = a.slices().get(i);
        Double y = b.slices().get(i);
        if (x != null && y != null && x > 0) {
          s.add(y / x);
        }
      }
      return new Ratio(b.cpuUsPerEvent() / a.cpuUsPerEvent(), s);
    }
  }

  /** The median of {@code values} (the mean of the middle two for an even count); NaN when empty. */
  static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> v = new ArrayList<>(values);
    v.sort(null);
    int n = v.size();
    return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
  }

  /** The geometric mean of positive ratios. */
  static double geometricMean(List<Double> ratios) {
    double log = 0;
    for (double r : ratios) {
      log += Math.log(r);
    }
    return Math.exp(log / ratios.size());
  }

  /** What to run: the two jars with their flags, how many pairs, the options both benches get. */
  record Plan(Path jarA, String optsA, Path jarB, String optsB, int pairs, List<String> benchArgs, Path out,
      String serverA, String serverB) {
    String header() {
      return "# Paired: B's CPU per event ÷ A's, measured at the same time\n\n"
          + "A: " + serverA + " `" + jarA.toAbsolutePath() + "`" + (optsA.isEmpty() ? "" : " with `" + optsA + "`")
          + "  \n"
          + "B: " + serverB + " `" + jarB.toAbsolutePath() + "`" + (optsB.isEmpty() ? "" : " with `" + optsB + "`")
          + "  \n"
          + "each bench: `--servers " + (serverA.equals(serverB) ? serverA : serverA + " (A) / " + serverB + " (B)")
          + " " + String.join(" ", benchArgs) + "`\n\n"
          + "| pair | A µs/event | B µs/event | B/A window | B/A slices (median) | A p50 / p99 ms | B p50 / p99 ms "
          + "| A / B resume p50 ms |\n|---:|---:|---:|---:|---|---:|---:|---:|\n";
    }
  }

  /** The plan {@code args} (after {@code --paired}) describe; null for --help. */
  static Plan parse(List<String> args, Path repo) {
    List<Path> jars = new ArrayList<>();
    int pairs = 4;
    String level = "100";
    String window = "60s";
    String warmup = BenchOptions.DEFAULT_WARMUP_MAX_MS / 1000 + "s"; // the bench's own longest warm-up
    String dropEvery = "10";
    String optsA = "";
    String optsB = "";
    String serverA = "iqstream";
    String serverB = "iqstream";
    List<String> passed = new ArrayList<>();
    Path out = repo.resolve("bench/results");
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--help") || a.equals("-h")) {
        return null;
      }
      if (a.equals("--no-pin")) {
        passed.add(a);
        continue;
      }
      if (!a.startsWith("--")) {
        if (jars.size() == 2) {
          throw new IllegalArgumentException("one jar too many: " + a);
        }
        jars.add(Path.of(a));
        continue;
      }
      if (i + 1 >= args.size()) {
        throw new IllegalArgumentException(a + " needs a value");
      }
      String v = args.get(++i);
      switch (a) {
        case "--pairs" -> pairs = Integer.parseInt(v);
        case "--level" -> level = v;
        case "--window" -> window = v;
        case "--warmup" -> warmup = v;
        case "--drop-every" -> dropEvery = v;
        case "--jvm-opts-a" -> optsA = v;
        case "--jvm-opts-b" -> optsB = v;
        case "--server-a" -> serverA = v;
        case "--server-b" -> serverB = v;
        case "--out" -> out = Path.of(v);
        case "--run-length", "--drain" -> passed.addAll(List.of(a, v));
        default -> throw new IllegalArgumentException("unknown option: " + a);
      }
    }
    if (jars.size() < 2) {
      throw new IllegalArgumentException("two server jars are needed");
    }
    for (Path jar : jars) {
      if (!Files.isRegularFile(jar)) {
        throw new IllegalArgumentException("no such jar: " + jar);
      }
    }
    for (String server : List.of(serverA, serverB)) {
      if (!PAIRABLE.contains(server)) {
        throw new IllegalArgumentException("--server-a / --server-b: iqstream, iqstream-traced or iqstream-disk,"
            + " not " + server);
      }
    }
    if (pairs < 1) {
      throw new IllegalArgumentException("--pairs must be at least 1");
    }
    List<String> benchArgs = new ArrayList<>(List.of("--levels", level, "--window", window,
        "--warmup", warmup, "--warmup-max", warmup, "--drop-every", dropEvery));
    benchArgs.addAll(passed);
    return new Plan(jars.get(0), optsA, jars.get(1), optsB, pairs, benchArgs, out, serverA, serverB);
  }

  /** Parses {@code args} and runs the pairs; the exit code (2: bad arguments, nothing started). */
  static int run(List<String> args, Path repo) throws Exception {
    Plan plan;
    try {
      plan = parse(args, repo);
    } catch (IllegalArgumentException e) {
      System.err.println("iqstream bench --paired: " + e.getMessage());
      System.err.print(USAGE);
      return 2;
    }
    if (plan == null) {
      System.out.print(USAGE);
      return 0;
    }
    Path dir = plan.out().resolve("paired-"
        + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    Files.createDirectories(dir);
    StringBuilder md = new StringBuilder(plan.header());
    List<Double> windowRatios = new ArrayList<>();
    List<Double> sliceRatios = new ArrayList<>();
    boolean limited = false;
    for (int p = 1; p <= plan.pairs(); p++) {
      // which bench starts first alternates, so the order cannot lean one way
      boolean bFirst = p % 2 == 0;
      Path dirA = dir.resolve("pair-" + p + "-A");
      Path dirB = dir.resolve("pair-" + p + "-B");
      System.out.println("[paired] pair " + p + " of " + plan.pairs() + ": A and B at once, " + (bFirst ? "B" : "A")
          + " started first (logs in " + dir + ")");
      Process a;
      Process b;
      if (bFirst) {
        b = start(plan.jarB(), plan.serverB(), plan.optsB(), plan.benchArgs(), dirB);
        a = start(plan.jarA(), plan.serverA(), plan.optsA(), plan.benchArgs(), dirA);
      } else {
        a = start(plan.jarA(), plan.serverA(), plan.optsA(), plan.benchArgs(), dirA);
        b = start(plan.jarB(), plan.serverB(), plan.optsB(), plan.benchArgs(), dirB);
      }
      int ra = a.waitFor();
      int rb = b.waitFor();
      if (ra != 0 || rb != 0) {
        System.err.println("[paired] a bench failed (exit " + ra + " / " + rb + "): see " + dirA + ".log and "
            + dirB + ".log");
        return 1;
      }
      Window wa = read(dirA);
      Window wb = read(dirB);
      Ratio r = Ratio.of(wa, wb);
      windowRatios.add(r.window());
      sliceRatios.addAll(r.slices());
      limited |= wa.limited() || wb.limited();
      String line = String.format(Locale.ROOT, "| %d | %.1f | %.1f | %.3f | %s (%.3f) | %.2f / %.2f | %.2f / %.2f "
          + "| %s / %s |", p, wa.cpuUsPerEvent(), wb.cpuUsPerEvent(), r.window(), format(r.slices()),
          median(r.slices()), wa.p50Ms(), wa.p99Ms(), wb.p50Ms(), wb.p99Ms(), ms(wa.resumeP50Ms()),
          ms(wb.resumeP50Ms()));
      md.append(line).append('\n');
      System.out.println(line);
    }
    String verdict = String.format(Locale.ROOT, "B/A: %.3f over the windows (geometric mean of %d), %.3f over the "
        + "%d slices (median)%s", geometricMean(windowRatios), windowRatios.size(), median(sliceRatios),
        sliceRatios.size(), limited ? "; a generator was the limit in some window (LIMITED): rerun at a lower "
            + "--level" : "");
    md.append('\n').append(verdict).append('\n');
    Files.writeString(dir.resolve("PAIRED.md"), md);
    System.out.println(verdict);
    System.out.println("summary: " + dir.resolve("PAIRED.md"));
    return 0;
  }

  /**
   * A bench of its own for {@code server} (one of {@link #PAIRABLE}) from {@code jar}, in a JVM
   * like this one's child (ZGC), its output in {@code dir}.log.
   */
  private static Process start(Path jar, String server, String jvmOpts, List<String> common, Path dir)
      throws IOException {
    List<String> args = new ArrayList<>(List.of("--servers", server));
    args.addAll(common);
    if (!jvmOpts.isBlank()) {
      args.addAll(List.of("--server-jvm-opts", jvmOpts));
    }
    args.addAll(List.of("--out", dir.toString()));
    ProcessBuilder pb = new ProcessBuilder(Main.benchCommand(ManagementFactory.getRuntimeMXBean()
        .getInputArguments(), args)).redirectErrorStream(true)
        .redirectOutput(dir.resolveSibling(dir.getFileName() + ".log").toFile());
    pb.environment().put("IQSTREAM_JAR", jar.toAbsolutePath().toString());
    return pb.start();
  }

  private static Window read(Path dir) throws IOException {
    JsonNode row = JSON.readTree(dir.resolve("latest/results.json").toFile()).path("results").path(0);
    List<Double> slices = new ArrayList<>();
    row.path("window_cpu_us_per_event").forEach(n -> slices.add(n.isNumber() ? n.asDouble() : null));
    JsonNode resume = row.path("resume_p50_ms");
    return new Window(row.path("cpu_us_per_event").asDouble(Double.NaN), slices, row.path("p50_ms").asDouble(),
        row.path("p99_ms").asDouble(), resume.isNumber() ? resume.asDouble() : null,
        row.path("loadgen_limited").asBoolean(false));
  }

  private static String format(List<Double> ratios) {
    StringBuilder b = new StringBuilder();
    for (double r : ratios) {
      b.append(b.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.2f", r));
    }
    return b.toString();
  }

  private static String ms(Double v) {
    return v == null ? "–" : String.format(Locale.ROOT, "%.2f", v);
  }
}
