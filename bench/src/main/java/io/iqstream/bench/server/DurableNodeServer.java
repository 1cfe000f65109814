package io.iqstream.bench.server;

import io.iqstream.bench.driver.DurableStreamsDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Path;
import java.util.List;

/**
 * The Durable Streams protocol's Node reference server, {@code @durable-streams/server} 0.3.7 from npm
 * (bench/peers/install-durable-node.sh), one Node process in memory on 127.0.0.1 (bench/peers/durable-node/serve.js:
 * {@code DurableStreamTestServer}, long-poll timeout 500 ms). No auth (it checks none). Driven by
 * {@link DurableStreamsDriver}.
 */
public final class DurableNodeServer extends ProcessServer {
  private final Path peers;

  public DurableNodeServer(Path peers) {
    this.peers = peers;
  }

  @Override
  public String name() {
    return "durable-node";
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-durable-node.sh");
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    int port = ServerProcess.freePort();
    Path script = peers.resolve("durable-node/serve.js").toAbsolutePath();
    process = ServerProcess.start(List.of("node", script.toString(), Integer.toString(port)), placement,
        script.getParent(), null);
    process.awaitPort(port, 20_000);
    return new DurableStreamsDriver("127.0.0.1", port, null);
  }

  @Override
  public String description() {
    return "Durable Streams' Node reference server (@durable-streams/server 0.3.7, npm), Node "
        + Peers.firstLine("node", "--version") + ", one process, in memory; a JSON stream per run, a POST per"
        + " event (keep-alive, pipelined), the last with Stream-Closed; live SSE reads resumed from the last"
        + " control event's offset; no auth";
  }
}
