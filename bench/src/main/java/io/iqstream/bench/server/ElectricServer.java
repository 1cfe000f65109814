package io.iqstream.bench.server;

import io.iqstream.bench.driver.DurableStreamsDriver;
import io.iqstream.bench.load.Driver;
import io.iqstream.bench.load.LoadGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Electric's Durable Streams server in Rust, crate {@code durable-streams} 0.1.5 (binary
 * {@code durable-streams-server}, built from crates.io by bench/peers/install-durable-streams.sh), one process on
 * 127.0.0.1, {@code --worker-threads} = its CPUs, its data directory in a temp folder of the bench's. Two setups:
 * <ul>
 *   <li>{@code electric-memory}: {@code --durability memory}, no write-ahead log: its fastest;
 *   <li>{@code electric-wal}: its default, a write-ahead log on disk (the VM's disk, as the default puts it).
 * </ul>
 * No auth (it checks none). Driven by {@link DurableStreamsDriver}. In both modes its streams' data lives in
 * per-stream files of the data directory, read through the page cache, not in its resident memory (its README:
 * "memory tracks stream count, not bytes"): the memory column's RSS growth leaves the data out, so
 * {@link #memoryCounters()} gives the data directory's size beside it.
 */
public final class ElectricServer extends ProcessServer {
  /** The crate's version the installer builds. */
  public static final String VERSION = "0.1.5";

  private final Path peers;
  private final boolean memory;
  private Path dir;
  private int cpus;

  public ElectricServer(Path peers, boolean memory) {
    this.peers = peers;
    this.memory = memory;
  }

  @Override
  public String name() {
    return memory ? "electric-memory" : "electric-wal";
  }

  @Override
  public void install() throws Exception {
    Peers.install(peers, "install-durable-streams.sh");
  }

  /** The binary the installer builds. */
  public static Path binary(Path peers) {
    return peers.resolve("durable-streams/bin/durable-streams-server").toAbsolutePath();
  }

  /** The command line for {@code port} and {@code dataDir}. */
  List<String> command(int port, Path dataDir, int workerThreads) {
    List<String> cmd = new ArrayList<>(List.of(binary(peers).toString(), "--host", "127.0.0.1",
        "--port", Integer.toString(port), "--data-dir", dataDir.toString(),
        "--worker-threads", Integer.toString(workerThreads), "--long-poll-timeout-ms", "500"));
    if (memory) {
      cmd.addAll(List.of("--durability", "memory"));
    }
    return cmd;
  }

  @Override
  public Driver start(Placement placement, int cpus, LoadGenerator generator) throws Exception {
    this.cpus = Math.max(1, cpus);
    int port = ServerProcess.freePort();
    dir = Files.createTempDirectory("iqstream-bench-" + name());
    process = ServerProcess.start(command(port, dir.resolve("data"), this.cpus), placement, dir, null);
    process.awaitPort(port, 20_000);
    return new DurableStreamsDriver("127.0.0.1", port, null);
  }

  /** The data directory's bytes at the loaded moment: what its streams hold outside its resident memory. */
  @Override
  public String memoryCounters() {
    if (dir == null) {
      return null;
    }
    try (var files = Files.walk(dir)) {
      long bytes = files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
      return String.format(java.util.Locale.ROOT, "data directory %.1f MiB (files in the page cache, not in its RSS)",
          bytes / 1048576.0);
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      return "data directory not read: " + e;
    }
  }

  @Override
  public void close() {
    super.close();
    TempDirs.delete(dir);
    dir = null;
  }

  @Override
  public String description() {
    return "Electric's Durable Streams server (crate durable-streams " + VERSION + ", cargo install --locked,"
        + " release build), --worker-threads " + cpus + ", "
        + (memory ? "--durability memory (no write-ahead log)" : "its default write-ahead log on disk")
        + "; a JSON stream per run, a POST per event (keep-alive, pipelined), the last with Stream-Closed;"
        + " live SSE reads resumed from the last control event's offset; no auth";
  }
}
