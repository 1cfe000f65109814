package io.iqstream.bench.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time and resident memory of a process and all its descendants, read from /proc (Linux). Any
 * thread; each call reads /proc afresh.
 */
public final class ProcTree {
  /** USER_HZ: the unit of utime/stime in /proc/[pid]/stat (100 on every Linux this runs on). */
  public static final long CLOCK_TICKS_PER_SEC = 100;
  private static final Path PROC = Path.of("/proc");

  private ProcTree() {}

  /** User + system CPU time of {@code pid} and its descendants (all threads), in microseconds. */
  public static long cpuMicros(long pid) {
    return cpuMicros(withDescendants(pid));
  }

  /**
   * User + system CPU time of these processes (all threads), in microseconds, with the time of the
   * children they reaped (cutime, cstime): a worker that dies and is reaped by its master (nginx
   * respawns workers) keeps counting through its parent.
   */
  public static long cpuMicros(List<Long> pids) {
    return cpuMicros(PROC, pids);
  }

  /** {@link #cpuMicros(List)} under another /proc (a test's fixture). */
  static long cpuMicros(Path proc, List<Long> pids) {
    long ticks = 0;
    for (long p : pids) {
      long[] f = stat(proc, p);
      if (f != null) {
        ticks += f[1] + f[2] + f[3] + f[4];
      }
    }
    return ticks * 1_000_000L / CLOCK_TICKS_PER_SEC;
  }

  /** Resident memory of {@code pid} and its descendants, KiB (see {@link #rssKib(List)}). */
  public static long rssKib(long pid) {
    return rssKib(withDescendants(pid));
  }

  /**
   * Resident memory of these processes, KiB: the proportional set size (shared pages, such as
   * nginx's shared memory zone, counted once over the processes that share them), else VmRSS.
   */
  public static long rssKib(List<Long> pids) {
    return rssKib(PROC, pids);
  }

  /** {@link #rssKib(List)} under another /proc (a test's fixture). */
  static long rssKib(Path proc, List<Long> pids) {
    long kib = 0;
    for (long p : pids) {
      Path dir = proc.resolve(Long.toString(p));
      kib += field(dir.resolve("smaps_rollup"), "Pss:")
          .orElseGet(() -> field(dir.resolve("status"), "VmRSS:").orElse(0L));
    }
    return kib;
  }

  private static java.util.Optional<Long> field(Path file, String name) {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(name)) {
          return java.util.Optional.of(Long.parseLong(line.replaceAll("[^0-9]", "")));
        }
      }
    } catch (IOException | RuntimeException e) {
      // the process ended meanwhile, or no such file on this kernel
    }
    return java.util.Optional.empty();
  }

  /** {@code pid} followed by every descendant alive now. */
  public static List<Long> withDescendants(long pid) {
    return withDescendants(PROC, pid);
  }

  /** {@link #withDescendants(long)} under another /proc (a test's fixture). */
  static List<Long> withDescendants(Path proc, long pid) {
    Map<Long, List<Long>> children = new HashMap<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(proc)) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
          continue;
        }
        long[] f = stat(proc, Long.parseLong(name));
        if (f != null) {
          children.computeIfAbsent(f[0], x -> new ArrayList<>()).add(Long.parseLong(name));
        }
      }
    } catch (IOException e) {
      return List.of(pid);
    }
    List<Long> out = new ArrayList<>();
    out.add(pid);
    for (int i = 0; i < out.size(); i++) {
      out.addAll(children.getOrDefault(out.get(i), List.of()));
    }
    return out;
  }

  /** {ppid, utime, stime, cutime, cstime} of one process, null if it is gone. */
  static long[] stat(Path proc, long pid) {
    try {
      String s = Files.readString(proc.resolve(Long.toString(pid)).resolve("stat"),
          StandardCharsets.US_ASCII);
      // the command name may hold spaces and parentheses: fields start after the last ')'
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      // f[0]=state f[1]=ppid ... f[11]=utime f[12]=stime f[13]=cutime f[14]=cstime
      return new long[] {Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]),
          Long.parseLong(f[13]), Long.parseLong(f[14])};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** CPU time of this JVM (all threads), microseconds. */
  public static long selfCpuMicros() {
    long[] f = stat(PROC, ProcessHandle.current().pid());
    return f == null ? 0 : (f[1] + f[2]) * 1_000_000L / CLOCK_TICKS_PER_SEC;
  }

  /** System (kernel) CPU time of this JVM (all threads), microseconds. */
  public static long selfSystemCpuMicros() {
    long[] f = stat(PROC, ProcessHandle.current().pid());
    return f == null ? 0 : f[2] * 1_000_000L / CLOCK_TICKS_PER_SEC;
  }

  /**
   * CPU time of this JVM's threads by kind, microseconds: {@code event loops} (Netty's), {@code jit}
   * (the compiler threads), {@code gc} (the collector's), {@code other}. From
   * /proc/self/task/{@literal *}/stat and comm; a thread that ended meanwhile is left out.
   */
  public static Map<String, Long> selfCpuMicrosByThreadKind() {
    return cpuMicrosByThreadKind("self");
  }

  /**
   * The CPU time of the compiler threads (C1, C2) of the processes {@code pids}, microseconds: 0 for a
   * process that is not a JVM (or has ended).
   */
  public static long jitCpuMicros(List<Long> pids) {
    long sum = 0;
    for (long pid : pids) {
      sum += cpuMicrosByThreadKind(Long.toString(pid)).get("jit");
    }
    return sum;
  }

  /** {@link #selfCpuMicrosByThreadKind()} for the process {@code proc} ("self" or a pid). */
  private static Map<String, Long> cpuMicrosByThreadKind(String proc) {
    Map<String, Long> out = new java.util.LinkedHashMap<>();
    for (String kind : List.of("event loops", "jit", "gc", "other")) {
      out.put(kind, 0L);
    }
    Path taskDir = PROC.resolve(proc).resolve("task");
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(taskDir)) {
      for (Path task : tasks) {
        // a thread's stat has its process's layout
        long[] f = stat(taskDir, Long.parseLong(task.getFileName().toString()));
        String comm;
        try {
          comm = Files.readString(task.resolve("comm"), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
          continue; // the thread ended meanwhile
        }
        if (f != null) {
          out.merge(threadKind(comm), (f[1] + f[2]) * 1_000_000L / CLOCK_TICKS_PER_SEC, Long::sum);
        }
      }
    } catch (IOException e) {
      return out;
    }
    return out;
  }

  /** The kind of a JVM thread by its name (as /proc shows it, cut to 15 characters). */
  static String threadKind(String comm) {
    if (comm.startsWith("multiThreadIoEv") || comm.contains("EventLoop")) {
      return "event loops";
    }
    if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
      return "jit";
    }
    if (comm.startsWith("GC ") || comm.startsWith("ZWorker") || comm.startsWith("ZDirector")
        || comm.startsWith("ZDriver") || comm.startsWith("ZUncommit") || comm.startsWith("G1 ")
        || comm.startsWith("Shenandoah") || comm.startsWith("VM Thread")) {
      return "gc";
    }
    return "other";
  }

  /**
   * Times this JVM's threads were taken off their CPU while they could run (other work preempted
   * them), summed over its threads ({@code nonvoluntary_ctxt_switches} of /proc/self/task/{@literal *}/status).
   */
  public static long selfInvoluntarySwitches() {
    long n = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(PROC.resolve("self/task"))) {
      for (Path task : tasks) {
        n += field(task.resolve("status"), "nonvoluntary_ctxt_switches:").orElse(0L);
      }
    } catch (IOException e) {
      return 0;
    }
    return n;
  }
}
