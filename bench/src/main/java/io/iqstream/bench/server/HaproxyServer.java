package io.iqstream.bench.server;

import io.iqstream.bench.driver.FloorDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The floor: HAProxy (Debian) in {@code mode tcp}, one frontend per generator thread relaying each
 * publisher's connection to the generator's listener unchanged. Its own config in a temp folder,
 * 127.0.0.1 only, {@code nbthread} = the CPUs it is given.
 */
public final class HaproxyServer extends ProcessServer {
  private final Path peers;
  private Path dir;
  private int cpus;

  public HaproxyServer(Path peers) {
    this.peers = peers;
  }

  @Override
  public String name() {
    return "haproxy-floor";
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-haproxy.sh");
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    this.cpus = cpus;
    FloorDriver driver = new FloorDriver();
    List<Integer> backends = driver.bind(generator);
    List<Integer> frontends = new ArrayList<>();
    StringBuilder cfg = new StringBuilder("""
        global
          maxconn 9500
          nbthread %d
          log stderr format raw local0 emerg
        defaults
          mode tcp
          timeout connect 5s
          timeout client 300s
          timeout server 300s
          option dontlognull
        """.formatted(cpus));
    for (int i = 0; i < backends.size(); i++) {
      int port = ServerProcess.freePort();
      frontends.add(port);
      cfg.append("""
          frontend f%d
            bind 127.0.0.1:%d
            maxconn 9500
            default_backend b%d
          backend b%d
            server g%d 127.0.0.1:%d
          """.formatted(i, port, i, i, i, backends.get(i)));
    }
    dir = Files.createTempDirectory("iqstream-bench-haproxy");
    Path conf = dir.resolve("haproxy.cfg");
    Files.writeString(conf, cfg);
    process = ServerProcess.start(List.of("haproxy", "-db", "-f", conf.toString()), placement, dir,
        null);
    for (int port : frontends) {
      process.awaitPort(port, 10_000);
    }
    driver.relayPorts(frontends);
    return driver;
  }

  @Override
  public String description() {
    return Peers.firstLine("haproxy", "-v") + "; mode tcp, nbthread " + cpus
        + "; each publisher's bytes relayed to its browser unchanged (no auth, no storage, no"
        + " resume: no browser drops)";
  }
}
