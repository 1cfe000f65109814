package io.iqstream.bench.driver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Where the tests find the peers built by bench/peers/install-*.sh. A peer not built yet is built
 * first when IQSTREAM_BENCH_PEERS=1 (minutes the first time, a copy from the machine's cache after:
 * bench/peers/go-peer.sh); otherwise its tests are skipped with the command that builds it, except
 * under CI=true, where a peer not built fails them (the peers suite of scripts/test-all.sh builds them
 * first: a suite that passes by skipping would not keep them working). These tests carry the JUnit tag
 * {@value #TAG}: the maven suite leaves them out, the peers suite runs them.
 */
public final class Peers {
  /** The JUnit tag of the tests that need the Go peers (bench/pom.xml leaves it out by default). */
  public static final String TAG = "peers";

  private Peers() {}


  public static Path dir() {
    return Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize()
        .resolve("bench/peers");
  }

  /** Builds (or copies from the cache) the peer if it is not there; skips or fails as above. */
  public static void assumeBuilt(Path binary, String script) throws Exception {
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
    if ("true".equals(System.getenv("CI"))) {
      throw new IllegalStateException(why + " (CI=true: not a reason to skip)");
    }
    System.out.println("skipped: " + why);
    Assumptions.abort(why);
  }
}
