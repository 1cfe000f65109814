package io.iqstream.bench.server;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One way of running IQ-Stream side by side with others in the same bench: the server's socket
 * transport ({@code --transport}, null for its default), a named collector setting (null for the
 * bench's default flags) and raw extra JVM flags. Its {@link #rowName()} carries the variant, e.g.
 * {@code iqstream[io_uring,zgc]}. Immutable; any thread.
 *
 * @param transport {@code auto}, {@code epoll}, {@code io_uring} or {@code nio}; null: not passed
 * @param gc a key of {@link #COLLECTORS}; null: the default sizing's collector (G1)
 * @param extraJvmOpts raw flags appended last (so they win), empty for none
 * @param baselineJar another build of the server (e.g. an earlier commit's jar) measured beside this
 *     one as {@code iqstream-baseline}; null: the server under test
 */
public record IqStreamSetup(String transport, String gc, List<String> extraJvmOpts, Path baselineJar) {
  /** The server's transports ({@code --transport}). */
  public static final List<String> TRANSPORTS = List.of("auto", "epoll", "io_uring", "nio");

  /**
   * The named collector settings of {@code --gc}, each the flags that replace the default's
   * collector (the heap stays fixed and pre-touched). All accepted by Temurin 25 (checked by
   * {@code IqStreamSetupTest}): generational ZGC is ZGC's only mode since JDK 24; Shenandoah is in
   * Temurin's builds; G1's young-size percentages are experimental options.
   */
  public static final Map<String, List<String>> COLLECTORS = Map.of(
      "g1", List.of("-XX:+UseG1GC"),
      "g1-lowpause", List.of("-XX:+UseG1GC", "-XX:MaxGCPauseMillis=5",
          "-XX:+UnlockExperimentalVMOptions", "-XX:G1NewSizePercent=2",
          "-XX:G1MaxNewSizePercent=10"),
      "zgc", List.of("-XX:+UseZGC"),
      "shenandoah", List.of("-XX:+UseShenandoahGC"));

  /** {@code --gc}'s names in the order of the help text. */
  public static final List<String> COLLECTOR_NAMES = List.of("g1", "g1-lowpause", "zgc",
      "shenandoah");

  /** Heap and collector of {@code ./iqstream serve}'s bench setup when IQSTREAM_JVM_OPTS is unset. */
  public static final String DEFAULT_SIZING =
      "-XX:+UseG1GC -Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:MaxDirectMemorySize=2g";

  /** Today's setup: server defaults, the default flags. */
  public static final IqStreamSetup DEFAULT = new IqStreamSetup(null, null, List.of());

  public IqStreamSetup {
    if (transport != null && !TRANSPORTS.contains(transport)) {
      throw new IllegalArgumentException("unknown server transport: " + transport + " (known: "
          + String.join(", ", TRANSPORTS) + ")");
    }
    if (gc != null && !COLLECTORS.containsKey(gc)) {
      throw new IllegalArgumentException("unknown collector setting: " + gc + " (known: "
          + String.join(", ", COLLECTOR_NAMES) + ")");
    }
    extraJvmOpts = List.copyOf(extraJvmOpts);
  }

  public IqStreamSetup(String transport, String gc, List<String> extraJvmOpts) {
    this(transport, gc, extraJvmOpts, null);
  }

  /** The baseline: {@code jar} with the default flags, then {@code extraJvmOpts}. */
  public static IqStreamSetup baseline(Path jar, List<String> extraJvmOpts) {
    return new IqStreamSetup(null, null, extraJvmOpts, jar);
  }

  /** Every combination of the transports and collectors asked for (an empty list: the default). */
  public static List<IqStreamSetup> combinations(List<String> transports, List<String> gcs,
      List<String> extraJvmOpts) {
    List<String> ts = transports.isEmpty() ? java.util.Collections.singletonList(null) : transports;
    List<String> cs = gcs.isEmpty() ? java.util.Collections.singletonList(null) : gcs;
    List<IqStreamSetup> out = new ArrayList<>();
    for (String t : ts) {
      for (String c : cs) {
        out.add(new IqStreamSetup(t, c, extraJvmOpts));
      }
    }
    return out;
  }

  /** {@code iqstream}, or with the variant: {@code iqstream[io_uring]}, {@code iqstream[epoll,zgc]}. */
  public String rowName() {
    List<String> parts = new ArrayList<>();
    if (transport != null) {
      parts.add(transport);
    }
    if (gc != null) {
      parts.add(gc);
    }
    String base = baselineJar == null ? "iqstream" : "iqstream-baseline";
    return parts.isEmpty() ? base : base + "[" + String.join(",", parts) + "]";
  }

  /**
   * The JVM flags: the launcher's fixed ones, the sizing ({@code sizing}: IQSTREAM_JVM_OPTS, else
   * {@link #DEFAULT_SIZING}) with its collector replaced by {@link #gc}'s when one is named, then
   * {@link #extraJvmOpts}.
   */
  public List<String> jvmFlags(String sizing) {
    List<String> flags = new ArrayList<>(List.of("-XX:+ExitOnOutOfMemoryError",
        "-Dio.netty.leakDetection.level=disabled", "--enable-native-access=ALL-UNNAMED",
        "-Dio.netty.tryReflectionSetAccessible=true",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
        "-Dio.netty.allocator.type=pooled"));
    if (Runtime.version().feature() >= 24) {
      // as the launcher: Netty 4.2 leaves sun.misc.Unsafe off on JDK 24+ unless it is allowed, and then
      // allocates a ByteBuffer view for every copy between direct buffers
      flags.add("--sun-misc-unsafe-memory-access=allow");
    }
    if (Runtime.version().feature() >= 22) {
      // as the launcher (MemoryPlan.trimFlag): freed native memory (the JIT compiler's arenas) handed back to the
      // system every 2 s, so it does not stay in the resident memory the memory column counts
      flags.add("-XX:TrimNativeHeapInterval=2000");
    }
    String s = sizing == null || sizing.isBlank() ? DEFAULT_SIZING : sizing;
    for (String f : s.trim().split("\\s+")) {
      if (gc == null || !isCollectorFlag(f)) {
        flags.add(f);
      }
    }
    if (gc != null) {
      flags.addAll(COLLECTORS.get(gc));
    }
    flags.addAll(extraJvmOpts);
    return flags;
  }

  /** The server's arguments for this setup ({@code --transport T}, or none). */
  public List<String> serverArgs() {
    return transport == null ? List.of() : List.of("--transport", transport);
  }

  /** Words for the report, e.g. "transport io_uring, collector zgc (-XX:+UseZGC)". */
  public String describe() {
    List<String> parts = new ArrayList<>();
    if (transport != null) {
      parts.add("transport " + transport);
    }
    if (gc != null) {
      parts.add("collector " + gc + " (" + String.join(" ", COLLECTORS.get(gc)) + ")");
    }
    if (!extraJvmOpts.isEmpty()) {
      parts.add("extra JVM flags " + String.join(" ", extraJvmOpts));
    }
    return String.join(", ", parts);
  }

  private static boolean isCollectorFlag(String flag) {
    String f = flag.toLowerCase(Locale.ROOT);
    return f.startsWith("-xx:+use") && f.endsWith("gc");
  }
}
