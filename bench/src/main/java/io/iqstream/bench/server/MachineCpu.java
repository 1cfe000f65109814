package io.iqstream.bench.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Time spent by some of the machine's CPUs, from {@code /proc/stat}: all of it, busy (everything but
 * idle and iowait) and softirq. Where the kernel does not account interrupt time exactly
 * ({@code CONFIG_IRQ_TIME_ACCOUNTING} off), the softirq column is sampled at the tick and the
 * softirq work done on a task's way out of a system call (loopback's receive processing, run by the
 * sender) is that task's system time instead. Immutable; any thread.
 *
 * @param totalTicks all time of these CPUs, USER_HZ ticks
 * @param busyTicks all but idle and iowait
 * @param softirqTicks softirq
 */
public record MachineCpu(long totalTicks, long busyTicks, long softirqTicks) {
  /** The time of {@code cpus} now, or zeros where /proc/stat cannot be read. */
  public static MachineCpu read(List<Integer> cpus) {
    return read(Path.of("/proc/stat"), cpus);
  }

  /** {@link #read(List)} from another file (a test's fixture). */
  static MachineCpu read(Path stat, List<Integer> cpus) {
    long total = 0;
    long busy = 0;
    long softirq = 0;
    try {
      for (String line : Files.readAllLines(stat)) {
        if (!line.startsWith("cpu") || line.startsWith("cpu ")) {
          continue;
        }
        String[] f = line.trim().split("\\s+");
        if (!cpus.contains(Integer.parseInt(f[0].substring(3)))) {
          continue;
        }
        // user nice system idle iowait irq softirq steal (guest time is inside user)
        long sum = 0;
        for (int i = 1; i <= 8 && i < f.length; i++) {
          sum += Long.parseLong(f[i]);
        }
        total += sum;
        busy += sum - Long.parseLong(f[4]) - Long.parseLong(f[5]);
        softirq += Long.parseLong(f[7]);
      }
    } catch (IOException | RuntimeException e) {
      return new MachineCpu(0, 0, 0);
    }
    return new MachineCpu(total, busy, softirq);
  }

  /** The time spent between {@code before} and this reading. */
  public MachineCpu since(MachineCpu before) {
    return new MachineCpu(totalTicks - before.totalTicks, busyTicks - before.busyTicks,
        softirqTicks - before.softirqTicks);
  }
}
