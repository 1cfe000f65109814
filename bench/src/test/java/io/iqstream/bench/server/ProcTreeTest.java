package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The bench's CPU and memory accounting of a server's process tree. */
class ProcTreeTest {
  @TempDir Path proc;

  /** One /proc/[pid]/stat line: comm, then state, ppid, ... utime (14th field), stime, cutime, cstime. */
  private void stat(long pid, String comm, long ppid, long utime, long stime, long cutime,
      long cstime) throws Exception {
    Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
    Files.writeString(dir.resolve("stat"), pid + " (" + comm + ") S " + ppid
        + " 7 7 0 -1 4194560 900 0 0 0 " + utime + " " + stime + " " + cutime + " " + cstime
        + " 20 0 12 0 3113 2253381632 5000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0"
        + " 0 0 0\n");
  }

  @Test
  void sumsUserSystemAndReapedChildrenTimeOverTheTreeOnly() throws Exception {
    stat(100, "nginx", 1, 150, 50, 10, 5);                      // master, reaped a worker: 15 ticks
    stat(101, "nginx: worker (a) ) x", 100, 20, 10, 0, 0);      // a name with spaces and parentheses
    stat(102, "sh", 101, 3, 1, 0, 0);                           // grandchild
    stat(200, "other", 1, 9999, 9999, 0, 0);                    // not in the tree
    Files.createDirectories(proc.resolve("self"));              // not a pid
    Files.createDirectories(proc.resolve("300"));               // a process gone: no stat

    List<Long> tree = ProcTree.withDescendants(proc, 100);
    assertEquals(List.of(100L, 101L, 102L), tree);
    long ticks = (150 + 50 + 10 + 5) + (20 + 10) + (3 + 1);
    assertEquals(ticks * 1_000_000L / ProcTree.CLOCK_TICKS_PER_SEC, ProcTree.cpuMicros(proc, tree));
    assertEquals(2_490_000L, ProcTree.cpuMicros(proc, tree), "249 ticks of 10 ms");
    assertEquals(0, ProcTree.cpuMicros(proc, List.of(300L)), "a process gone counts nothing");
  }

  @Test
  void residentMemoryIsTheProportionalSetSizeElseVmRss() throws Exception {
    stat(100, "java", 1, 0, 0, 0, 0);
    stat(101, "java", 100, 0, 0, 0, 0);
    Files.writeString(proc.resolve("100/smaps_rollup"),
        "00400000-7fff [rollup]\nRss:  5000 kB\nPss:  4000 kB\nShared_Clean: 2000 kB\n");
    Files.writeString(proc.resolve("101/status"), "Name:\tjava\nVmRSS:\t  700 kB\nThreads:\t3\n");
    assertEquals(4000 + 700, ProcTree.rssKib(proc, List.of(100L, 101L)));
  }

  private static final Pattern TIMES = Pattern.compile("(\\d+)m([\\d.]+)s\\s+(\\d+)m([\\d.]+)s");

  /**
   * A real shell burns CPU itself and in a child it waits for, then reports both from its own
   * accounting ({@code times}: its user and system time, then its reaped children's); the tree's CPU
   * read from /proc matches that report within a few clock ticks, however long it took on the wall.
   */
  @Test
  @Timeout(120)
  void matchesTheCpuTimeAProcessReportsForItselfAndItsReapedChildren() throws Exception {
    String script = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done;"
        + " (j=0; while [ $j -lt 150000 ]; do j=$((j+1)); done);"
        + " times; echo done; read x";
    Process p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      long reportedMicros = 0;
      long childrenMicros = 0;
      int lines = 0;
      String line;
      while ((line = out.readLine()) != null && !line.equals("done")) {
        Matcher m = TIMES.matcher(line);
        assertTrue(m.find(), "times output: " + line);
        long micros = Math.round((Long.parseLong(m.group(1)) * 60 + Double.parseDouble(m.group(2))
            + Long.parseLong(m.group(3)) * 60 + Double.parseDouble(m.group(4))) * 1e6);
        reportedMicros += micros;
        if (++lines == 2) {
          childrenMicros = micros;
        }
      }
      assertEquals(2, lines, "shell and children lines");
      assertTrue(childrenMicros >= 50_000, "the child burned CPU: " + childrenMicros + " µs");

      List<Long> tree = ProcTree.withDescendants(p.pid());
      assertEquals(List.of(p.pid()), tree, "the child was reaped");
      long measured = ProcTree.cpuMicros(tree);
      // utime, stime, cutime and cstime are each rounded to a clock tick (10 ms)
      long tolerance = 4 * 1_000_000L / ProcTree.CLOCK_TICKS_PER_SEC + reportedMicros / 20;
      assertTrue(Math.abs(measured - reportedMicros) <= tolerance,
          "ProcTree " + measured + " µs vs the shell's own " + reportedMicros + " µs (children "
              + childrenMicros + ")");
    } finally {
      p.destroyForcibly().waitFor();
    }
  }

  @Test
  void jvmThreadsAreSortedByKindFromTheirNames() {
    assertEquals("event loops", ProcTree.threadKind("multiThreadIoEv"));
    assertEquals("jit", ProcTree.threadKind("C2 CompilerThre"));
    assertEquals("gc", ProcTree.threadKind("ZWorkerYoung#0"));
    assertEquals("gc", ProcTree.threadKind("GC Thread#0"));
    assertEquals("other", ProcTree.threadKind("main"));
    java.util.Map<String, Long> own = ProcTree.selfCpuMicrosByThreadKind();
    assertEquals(java.util.List.of("event loops", "jit", "gc", "other"), java.util.List.copyOf(own.keySet()));
    assertTrue(own.values().stream().mapToLong(Long::longValue).sum() > 0, "this JVM has run: " + own);
  }

  @Test
  void jitTimeIsAJvmsCompilerThreadsAndNoneForOtherProcesses() throws Exception {
    long self = ProcessHandle.current().pid();
    assertTrue(ProcTree.jitCpuMicros(java.util.List.of(self)) > 0, "this JVM has compiled code");
    Process sleep = new ProcessBuilder("sleep", "5").start();
    try {
      assertEquals(0, ProcTree.jitCpuMicros(java.util.List.of(sleep.pid())));
    } finally {
      sleep.destroyForcibly().waitFor();
    }
  }
}
