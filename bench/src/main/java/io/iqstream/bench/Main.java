package io.iqstream.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** {@code ./iqstream bench [options]}: see {@link BenchOptions#USAGE}. */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    Path repo = repoRoot();
    if (args.length > 0 && args[0].equals("--paired")) {
      System.exit(Paired.run(List.of(args).subList(1, args.length), repo));
    }
    BenchOptions options;
    try {
      options = BenchOptions.parse(args, repo);
    } catch (IllegalArgumentException e) {
      System.err.println("iqstream bench: " + e.getMessage());
      System.err.print(BenchOptions.USAGE);
      System.exit(2);
      return;
    }
    if (options.help()) {
      System.out.print(BenchOptions.USAGE);
      return;
    }
    if (!usesZgc() && System.getProperty(CHILD) == null) {
      System.exit(rerunWithZgc(args));
    }
    Path dir = new BenchRunner(options, String.join(" ", args), true).run();
    System.out.println("results: " + dir.resolve("results.json"));
    System.out.println("report:  " + dir.resolve("REPORT.md"));
    System.exit(0);
  }

  private static final String CHILD = "iqstream.bench.child";

  private static boolean usesZgc() {
    return ManagementFactory.getGarbageCollectorMXBeans().stream()
        .anyMatch(gc -> gc.getName().startsWith("ZGC"));
  }

  /**
   * Runs the bench again in a JVM with ZGC: the generator's latency figures must not carry its own
   * GC pauses (a young collection of the runs in flight stops a stop-the-world collector's single
   * generator thread for tens of milliseconds; ZGC's pauses stay under a millisecond).
   */
  private static int rerunWithZgc(String[] args) throws Exception {
    List<String> jvm = new ArrayList<>();
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!(a.startsWith("-XX:+Use") && a.endsWith("GC"))) {
        jvm.add(a);
      }
    }
    jvm.addAll(List.of("-XX:+UseZGC", "-Xms512m", "-D" + CHILD + "=true"));
    return new ProcessBuilder(benchCommand(jvm, List.of(args))).inheritIO().start().waitFor();
  }

  /** The command that runs this bench's {@code main} again: this JVM's java and class path, {@code jvm} flags. */
  static List<String> benchCommand(List<String> jvm, List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(jvm);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
    cmd.addAll(args);
    return cmd;
  }

  /** The repository root: IQSTREAM_HOME, else the working directory if it holds bench/. */
  static Path repoRoot() {
    String home = System.getenv("IQSTREAM_HOME");
    if (home != null && !home.isBlank()) {
      return Path.of(home).toAbsolutePath();
    }
    Path cwd = Path.of("").toAbsolutePath();
    if (!Files.isDirectory(cwd.resolve("bench")) && Files.isDirectory(cwd.resolve("../bench"))) {
      return cwd.getParent();
    }
    return cwd;
  }
}
