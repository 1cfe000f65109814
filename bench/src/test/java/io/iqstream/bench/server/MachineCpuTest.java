package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MachineCpuTest {
  @TempDir Path dir;

  @Test
  void readsTheChosenCpusTotalBusyAndSoftirqTicks() throws Exception {
    Path stat = dir.resolve("stat");
    // user nice system idle iowait irq softirq steal guest guest_nice
    Files.writeString(stat, """
        cpu  300 0 60 900 10 0 9 0 0 0
        cpu0 100 0 20 300 5 0 3 0 0 0
        cpu1 200 0 40 600 5 0 6 0 0 0
        intr 12345
        """);
    MachineCpu one = MachineCpu.read(stat, List.of(1));
    assertEquals(200 + 40 + 600 + 5 + 6, one.totalTicks());
    assertEquals(200 + 40 + 6, one.busyTicks());
    assertEquals(6, one.softirqTicks());
    MachineCpu both = MachineCpu.read(stat, List.of(0, 1));
    assertEquals(9, both.softirqTicks());
    assertEquals(new MachineCpu(1, 2, 3), new MachineCpu(11, 22, 33).since(new MachineCpu(10, 20, 30)));
    assertEquals(new MachineCpu(0, 0, 0), MachineCpu.read(dir.resolve("none"), List.of(0)));
  }
}
