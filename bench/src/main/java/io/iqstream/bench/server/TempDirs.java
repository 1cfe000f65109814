package io.iqstream.bench.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removes a server's temporary folder after it stopped (a peer's history file, its config). */
final class TempDirs {
  private TempDirs() {}

  static void delete(Path dir) {
    if (dir == null || !Files.isDirectory(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // left behind in the temp folder
    }
  }
}
