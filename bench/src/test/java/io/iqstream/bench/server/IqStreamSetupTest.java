package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class IqStreamSetupTest {
  @Test
  void theDefaultSetupKeepsTodaysFlagsAndPassesNoTransport() {
    List<String> flags = IqStreamSetup.DEFAULT.jvmFlags(null);
    assertTrue(flags.containsAll(List.of(IqStreamSetup.DEFAULT_SIZING.split(" "))), flags.toString());
    assertEquals(List.of(), IqStreamSetup.DEFAULT.serverArgs());
    assertEquals("iqstream", IqStreamSetup.DEFAULT.rowName());
    assertTrue(IqStreamSetup.DEFAULT.jvmFlags("-Xmx1g -XX:+UseParallelGC")
        .containsAll(List.of("-Xmx1g", "-XX:+UseParallelGC")), "IQSTREAM_JVM_OPTS replaces the sizing");
  }

  @Test
  void aNamedCollectorReplacesTheSizingsCollectorAndKeepsTheHeap() {
    IqStreamSetup zgc = new IqStreamSetup("io_uring", "zgc", List.of("-Xss1m"));
    List<String> flags = zgc.jvmFlags(null);
    assertFalse(flags.contains("-XX:+UseG1GC"), flags.toString());
    assertTrue(flags.containsAll(List.of("-XX:+UseZGC", "-Xms512m", "-Xmx512m",
        "-XX:+AlwaysPreTouch")), flags.toString());
    assertEquals("-Xss1m", flags.get(flags.size() - 1), "extra flags last, so they win");
    assertEquals(List.of("--transport", "io_uring"), zgc.serverArgs());
    assertEquals("iqstream[io_uring,zgc]", zgc.rowName());
    assertTrue(zgc.describe().contains("-XX:+UseZGC"), zgc.describe());
    assertThrows(IllegalArgumentException.class, () -> new IqStreamSetup("kqueue", null, List.of()));
  }

  /** Each named setting starts a JVM of the JDK running the tests (the bench runs the server on it). */
  @Test
  void theBaselineRunsItsOwnJarUnderItsOwnNameWithTheDefaultFlagsThenItsOwn() {
    IqStreamSetup base = IqStreamSetup.baseline(java.nio.file.Path.of("/tmp/old.jar"),
        List.of("--sun-misc-unsafe-memory-access=warn"));
    assertEquals("iqstream-baseline", base.rowName());
    List<String> flags = base.jvmFlags(null);
    assertTrue(flags.containsAll(List.of(IqStreamSetup.DEFAULT_SIZING.split(" "))), flags.toString());
    assertEquals("--sun-misc-unsafe-memory-access=warn", flags.get(flags.size() - 1), "its flags last, so they win");
    assertEquals(Runtime.version().feature() >= 24,
        IqStreamSetup.DEFAULT.jvmFlags(null).contains("--sun-misc-unsafe-memory-access=allow"),
        "Unsafe allowed where the JDK would otherwise keep Netty off it, as the launcher does");
    assertEquals(Runtime.version().feature() >= 22,
        IqStreamSetup.DEFAULT.jvmFlags(null).contains("-XX:TrimNativeHeapInterval=2000"),
        "freed native memory trimmed where the JDK has the option, as the launcher does (MemoryPlan.trimFlag)");
  }

  @Test
  void everyNamedCollectorIsAcceptedByThisJdk() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    for (String gc : IqStreamSetup.COLLECTOR_NAMES) {
      List<String> cmd = new ArrayList<>(List.of(java));
      cmd.addAll(new IqStreamSetup(null, gc, List.of()).jvmFlags("-Xms64m -Xmx64m"));
      cmd.add("-version");
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), gc);
      assertEquals(0, p.exitValue(), gc + ": " + out);
    }
  }
}
