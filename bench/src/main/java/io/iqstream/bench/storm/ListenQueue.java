package io.iqstream.bench.storm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The kernel's listen-queue counters from /proc/net/netstat ({@code TcpExt: ListenOverflows ListenDrops}): a
 * connection dropped because a listener's accept queue was full, machine-wide (on this bench's loopback, the
 * server under test's). Zero where the file cannot be read.
 */
public record ListenQueue(long overflows, long drops) {

  public static ListenQueue read() {
    return read(Path.of("/proc/net/netstat"));
  }

  static ListenQueue read(Path netstat) {
    try {
      List<String> lines = Files.readAllLines(netstat);
      for (int i = 0; i + 1 < lines.size(); i++) {
        if (lines.get(i).startsWith("TcpExt:") && lines.get(i + 1).startsWith("TcpExt:")) {
          String[] names = lines.get(i).trim().split("\\s+");
          String[] values = lines.get(i + 1).trim().split("\\s+");
          long overflows = 0;
          long drops = 0;
          for (int j = 1; j < names.length && j < values.length; j++) {
            if (names[j].equals("ListenOverflows")) {
              overflows = Long.parseLong(values[j]);
            } else if (names[j].equals("ListenDrops")) {
              drops = Long.parseLong(values[j]);
            }
          }
          return new ListenQueue(overflows, drops);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return new ListenQueue(0, 0);
  }

  /** The counts since {@code before}. */
  public ListenQueue since(ListenQueue before) {
    return new ListenQueue(overflows - before.overflows, drops - before.drops);
  }
}
