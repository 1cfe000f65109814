package io.iqstream.bench.driver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Where the tests find the peers built by bench/peers/install-*.sh. A peer not built yet is built
 * first when IQSTREAM_BENCH_PEERS=1 (a few minutes of go build each); otherwise its tests are skipped
 * with the command that builds it.
 */
final class Peers {
  private Peers() {}

  static Path dir() {
    return Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize()
        .resolve("bench/peers");
  }

  static void assumeBuilt(Path binary, String script) throws Exception {
    if (Files.isExecutable(binary)) {
      return;
    }
    if ("1".equals(System.getenv("IQSTREAM_BENCH_PEERS"))) {
      Process p = new ProcessBuilder("sh", dir().resolve(script).toString()).inheritIO().start();
      if (!p.waitFor(20, TimeUnit.MINUTES) || p.exitValue() != 0) {
        throw new IllegalStateException(script + " failed");
      }
      return;
    }
    String why = binary + " is not built: run bench/peers/" + script
        + " (or set IQSTREAM_BENCH_PEERS=1)";
    System.out.println("skipped: " + why);
    Assumptions.abort(why);
  }
}
