package io.iqstream.bench.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.bench.driver.SoketiDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Soketi 1.6.1 from npm (on uWebSockets.js 20.30.0 via an npm override; Soketi pins 20.10.0 by a git
 * URL that does not install here), one Node process, memory adapter, private channels. Everything on
 * 127.0.0.1: HTTP/WebSocket server, metrics server, and cluster discovery (unicast to loopback, so it
 * never broadcasts).
 */
public final class SoketiServer extends ProcessServer {
  private final Path peers;

  public SoketiServer(Path peers) {
    this.peers = peers;
  }

  @Override
  public String name() {
    return "soketi";
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-soketi.sh");
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    byte[] b = new byte[16];
    new SecureRandom().nextBytes(b);
    String secret = HexFormat.of().formatHex(b);
    String appId = "bench";
    String key = "bench-key";
    int port = ServerProcess.freePort();
    Map<String, Object> cfg = new LinkedHashMap<>();
    cfg.put("host", "127.0.0.1");
    cfg.put("port", port);
    cfg.put("debug", false);
    cfg.put("metrics.enabled", false);
    cfg.put("metrics.host", "127.0.0.1");
    cfg.put("metrics.port", ServerProcess.freePort());
    cfg.put("cluster.hostname", "127.0.0.1");
    cfg.put("cluster.address", "127.0.0.1");
    cfg.put("cluster.unicast", "127.0.0.1");
    cfg.put("cluster.broadcast", "127.0.0.1");
    cfg.put("cluster.port", ServerProcess.freePort());
    cfg.put("eventLimits.maxPayloadInKb", 100);
    cfg.put("appManager.array.apps", List.of(Map.of(
        "id", appId, "key", key, "secret", secret, "maxConnections", -1,
        "enableClientMessages", false, "enabled", true, "maxBackendEventsPerSecond", -1,
        "maxClientEventsPerSecond", -1, "maxReadRequestsPerSecond", -1)));
    Path dir = Files.createTempDirectory("iqstream-bench-soketi");
    Path conf = dir.resolve("soketi.json");
    new ObjectMapper().writeValue(conf.toFile(), cfg);
    Path cli = peers.resolve("soketi/node_modules/@soketi/soketi/bin/server.js").toAbsolutePath();
    process = ServerProcess.start(List.of("node", cli.toString(), "start", "--config=" + conf),
        placement, dir, null);
    process.awaitPort(port, 20_000);
    return new SoketiDriver("127.0.0.1", port, appId, key, secret);
  }

  @Override
  public String description() {
    return "Soketi 1.6.1 (npm; uWebSockets.js 20.30.0 via override, not the pinned 20.10.0), Node "
        + Peers.firstLine("node", "--version") + ", one process, Pusher protocol 7 over WebSocket,"
        + " signed HTTP API publish per event, private-channel HMAC auth; no history, no resume";
  }
}
