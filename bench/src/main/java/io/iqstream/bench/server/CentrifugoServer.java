package io.iqstream.bench.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.bench.driver.CentrifugoDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Centrifugo v6.9.1 (built from the Go module proxy by bench/peers/install-centrifugo.sh), one
 * process, listening on 127.0.0.1 only (its internal endpoints on the same port), its fastest setup:
 * the memory engine (its default), log level error, Prometheus and usage statistics off. The runs'
 * namespace keeps a history ({@code history_size} {@value #HISTORY_SIZE}, more than a run's 429
 * events; {@code history_ttl} 70 s, a run and its retention, as Nchan's message timeout) and forces
 * recovery; {@code client.recovery_max_publication_limit} is raised from its default 300 to
 * {@value #RECOVERY_LIMIT}, so a reconnect anywhere inside a run recovers what it missed (300 would
 * refuse one that missed more). Subscribers use the unidirectional SSE transport with connection
 * JWTs (HS256); a refused connect is answered with an HTTP status
 * ({@code connect_code_to_http_response}: 3500 invalid token and 3501 no credentials become 401)
 * instead of a 200 stream that ends at once.
 */
public final class CentrifugoServer extends ProcessServer {
  static final int HISTORY_SIZE = 500;
  static final int RECOVERY_LIMIT = 1000;

  private final Path peers;
  private Path dir;
  private int cpus;

  public CentrifugoServer(Path peers) {
    this.peers = peers;
  }

  @Override
  public String name() {
    return "centrifugo";
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-centrifugo.sh");
  }

  /** The binary the installer builds. */
  public static Path binary(Path peers) {
    return peers.resolve("centrifugo/bin/centrifugo").toAbsolutePath();
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    this.cpus = cpus;
    String tokenSecret = MercureServer.secret();
    String apiKey = MercureServer.secret();
    int port = ServerProcess.freePort();
    Map<String, Object> cfg = new LinkedHashMap<>();
    cfg.put("http_server", Map.of("address", "127.0.0.1", "port", port,
        "internal_address", "127.0.0.1"));
    cfg.put("log", Map.of("level", "error"));
    cfg.put("engine", Map.of("type", "memory"));
    cfg.put("http_api", Map.of("key", apiKey));
    cfg.put("client", Map.of(
        "token", Map.of("hmac_secret_key", tokenSecret),
        "recovery_max_publication_limit", RECOVERY_LIMIT));
    cfg.put("channel", Map.of("namespaces", List.of(Map.of(
        "name", CentrifugoDriver.NAMESPACE,
        "history_size", HISTORY_SIZE,
        "history_ttl", "70s",
        "force_recovery", true))));
    Map<String, Object> refused = Map.of("status_code", 401);
    cfg.put("uni_sse", Map.of("enabled", true, "connect_code_to_http_response", Map.of(
        "enabled", true,
        "transforms", List.of(Map.of("code", 3500, "to", refused),
            Map.of("code", 3501, "to", refused)))));
    cfg.put("prometheus", Map.of("enabled", false));
    cfg.put("usage_stats", Map.of("disabled", true));
    dir = Files.createTempDirectory("iqstream-bench-centrifugo");
    Path conf = dir.resolve("config.json");
    new ObjectMapper().writeValue(conf.toFile(), cfg);
    process = ServerProcess.start(List.of("env", "GOMAXPROCS=" + cpus, binary(peers).toString(),
        "--config", conf.toString()), placement, dir, null);
    process.awaitPort(port, 20_000);
    return new CentrifugoDriver("127.0.0.1", port, tokenSecret, apiKey);
  }

  @Override
  public void close() {
    super.close();
    TempDirs.delete(dir);
    dir = null;
  }

  @Override
  public String description() {
    return "Centrifugo " + Peers.firstLine(binary(peers).toString(), "version")
        + " (Go module proxy, CGO_ENABLED=0), GOMAXPROCS " + cpus + ", memory engine, namespace"
        + " history " + HISTORY_SIZE + " / 70 s with forced recovery, recovery limit "
        + RECOVERY_LIMIT + "; an API publish per event (keep-alive), uni_sse subscribers with a"
        + " connection JWT naming their run's channel, resume by recovery (epoch + offset)";
  }
}
