package io.iqstream.bench.server;

import io.iqstream.bench.driver.FloorDriver;
import io.iqstream.bench.floor.NettyRelay;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JVM's floor ({@link NettyRelay}): the TCP relay of the HAProxy floor on Netty's epoll transport, in a JVM
 * started with IQ-Stream's flags, one event loop per CPU it is given. Same driver as the HAProxy floor: each
 * publisher's bytes (already SSE frames) reach its browser unchanged.
 */
public final class NettyFloorServer extends ProcessServer {
  private static final Pattern LISTENING = Pattern.compile("netty-floor listening ([0-9,]+)");

  private final List<String> jvmFlags;
  private int cpus;

  /** Started with {@code jvmFlags} (IQ-Stream's, so the two JVMs differ only in the code they run). */
  public NettyFloorServer(List<String> jvmFlags) {
    this.jvmFlags = List.copyOf(jvmFlags);
  }

  @Override
  public String name() {
    return "netty-floor";
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    this.cpus = cpus;
    FloorDriver driver = new FloorDriver();
    List<Integer> backends = driver.bind(generator);
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(jvmFlags);
    cmd.addAll(List.of("-cp", ownJar().toString(), NettyRelay.class.getName(), Integer.toString(Math.max(1, cpus))));
    for (int port : backends) {
      cmd.add(Integer.toString(port));
    }
    process = ServerProcess.start(cmd, placement, null, line -> LISTENING.matcher(line).find());
    Matcher m = LISTENING.matcher(process.awaitReady(60_000));
    if (!m.find()) {
      throw new IllegalStateException("netty-floor printed no ports");
    }
    List<Integer> frontends = Arrays.stream(m.group(1).split(",")).map(Integer::parseInt).toList();
    driver.relayPorts(frontends);
    return driver;
  }

  /** The bench's own jar (or classes folder), which holds the relay. */
  private static Path ownJar() throws Exception {
    return Path.of(NettyRelay.class.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  @Override
  public String description() {
    return "Netty " + io.netty.util.Version.identify().values().stream().findFirst()
        .map(v -> v.artifactVersion()).orElse("?") + " epoll, " + Math.max(1, cpus) + " event loop(s), JVM "
        + Runtime.version() + " with IQ-Stream's flags; each publisher's bytes relayed to its browser unchanged"
        + " (no HTTP, auth, storage or resume: no browser drops)";
  }
}
