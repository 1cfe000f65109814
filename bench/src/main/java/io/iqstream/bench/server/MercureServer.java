package io.iqstream.bench.server;

import io.iqstream.bench.driver.MercureDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * The Mercure hub v0.24.2 (Caddy v2.11.3 with the Mercure module, built from the Go module proxy by
 * bench/peers/install-mercure.sh), one process, listening on 127.0.0.1 only, Caddy's admin endpoint
 * off, its log at WARN (no line per subscriber). Two setups:
 * <ul>
 *   <li>{@code mercure}: {@code transport local}, in memory, its fastest: no history, so a browser that
 *       reconnects with Last-Event-ID gets only what comes after;
 *   <li>{@code mercure-history}: {@code transport bolt}, the history-keeping default (a bbolt file, one
 *       commit per publish). v0.24.2 resumes by scanning the history from its oldest entry and gives up
 *       after 10,000 entries ({@code maxHistoryScan}), all topics together; so the history is trimmed
 *       to the newest 10,000 updates ({@code size 10000}) on every publish ({@code cleanup_frequency 1}:
 *       the Caddyfile path otherwise leaves it at 0, never trimmed, and any other value runs the
 *       cleanup with the probability 1 - f, the inverse of the docs). A resume then finds its
 *       Last-Event-ID when fewer than 10,000 updates were published hub-wide since; a larger size
 *       only puts the newest entries out of the scan's reach.
 * </ul>
 * Both: {@code write_timeout 0s} (else every connection is cut after 600 s), the default
 * {@code dispatch_timeout} (5 s) and Mercure's fixed buffer of 1,000 updates per subscriber; private
 * updates, HS256 publisher and subscriber keys of the bench's own, made at each start.
 */
public final class MercureServer extends ProcessServer {
  /** The history kept by the bolt transport: Mercure v0.24.2's resume scans at most this many. */
  public static final int BOLT_HISTORY = 10_000;

  private final Path peers;
  private final boolean history;
  private Path dir;
  private int cpus;

  public MercureServer(Path peers, boolean history) {
    this.peers = peers;
    this.history = history;
  }

  @Override
  public String name() {
    return history ? "mercure-history" : "mercure";
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-mercure.sh");
  }

  /** The hub binary the installer builds. */
  public static Path binary(Path peers) {
    return peers.resolve("mercure/bin/mercure").toAbsolutePath();
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    this.cpus = cpus;
    String publisherSecret = secret();
    String subscriberSecret = secret();
    int port = ServerProcess.freePort();
    dir = Files.createTempDirectory("iqstream-bench-" + name());
    String transport = history ? """
        transport bolt {
              path %s
              size %d
              cleanup_frequency 1
            }""".formatted(dir.resolve("mercure.db"), BOLT_HISTORY) : "transport local";
    String caddyfile = """
        {
          admin off
          auto_https off
          persist_config off
          skip_install_trust
          log {
            level WARN
          }
        }

        http://:%d {
          bind 127.0.0.1
          mercure {
            publisher_jwt %s HS256
            subscriber_jwt %s HS256
            %s
            write_timeout 0s
          }
          respond 404
        }
        """.formatted(port, publisherSecret, subscriberSecret, transport);
    Path conf = dir.resolve("Caddyfile");
    Files.writeString(conf, caddyfile);
    process = ServerProcess.start(List.of("env", "XDG_DATA_HOME=" + dir.resolve("data"),
        "XDG_CONFIG_HOME=" + dir.resolve("config"), "GOMAXPROCS=" + cpus,
        binary(peers).toString(), "run", "--config", conf.toString(), "--adapter", "caddyfile"),
        placement, dir, null);
    process.awaitPort(port, 20_000);
    return new MercureDriver("127.0.0.1", port, publisherSecret, subscriberSecret, history);
  }

  static String secret() {
    byte[] b = new byte[32];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  @Override
  public void close() {
    super.close();
    TempDirs.delete(dir);
    dir = null;
  }

  @Override
  public String description() {
    return "Mercure hub v0.24.2 on Caddy " + Peers.firstLine(binary(peers).toString(), "version")
        .split(" ")[0] + " (Go module proxy, CGO_ENABLED=0), GOMAXPROCS " + cpus + ", "
        + (history ? "transport bolt (history: the newest " + BOLT_HISTORY + " updates, trimmed on"
            + " every publish; a bbolt commit per publish), Last-Event-ID resume from it"
            : "transport local (in memory, no history: a reconnect gets only what follows)")
        + ", a form POST per event (keep-alive), private updates, per-subscriber JWT naming its"
        + " run's topic";
  }
}
