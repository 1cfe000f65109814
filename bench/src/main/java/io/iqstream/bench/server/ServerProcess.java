package io.iqstream.bench.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process started for the bench (optionally under {@code taskset -c}), with its output kept
 * whole in a temporary file ({@link #saveOutput}: the runner copies it beside the results), its last
 * {@value #TAIL_CHARS} characters in memory for error messages, and scanned for a readiness line. Runner's
 * thread.
 */
public final class ServerProcess implements AutoCloseable {
  static final int TAIL_CHARS = 8000;

  private final Process process;
  private final CompletableFuture<String> ready = new CompletableFuture<>();
  private final StringBuilder tail = new StringBuilder();
  private final Path log;
  private final Writer logWriter;

  private ServerProcess(Process process, Predicate<String> readyLine) throws IOException {
    this.process = process;
    this.log = Files.createTempFile("iqstream-bench-output", ".log");
    this.logWriter = Files.newBufferedWriter(log, StandardCharsets.UTF_8);
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          synchronized (tail) {
            tail.append(line).append('\n');
            if (tail.length() > TAIL_CHARS) {
              tail.delete(0, tail.length() - TAIL_CHARS);
            }
            keep(line);
          }
          if (readyLine != null && !ready.isDone() && readyLine.test(line)) {
            ready.complete(line);
          }
        }
      } catch (IOException ignored) {
        // process ended
      }
      ready.completeExceptionally(new IllegalStateException("process ended before it was ready"));
    }, "server-output");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code command} with its placement (CPUs, priority). */
  public static ServerProcess start(List<String> command, Placement placement, Path dir,
      Predicate<String> readyLine) throws IOException {
    List<String> cmd = new ArrayList<>(placement.prefix());
    cmd.addAll(command);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    if (dir != null) {
      pb.directory(dir.toFile());
    }
    return new ServerProcess(pb.start(), readyLine);
  }

  /** Waits for the readiness line; returns it. */
  public String awaitReady(long timeoutMs) throws Exception {
    try {
      return ready.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("server not ready: " + e.getMessage() + "\n--- output:\n"
          + output(), e);
    }
  }

  /** A free TCP port on 127.0.0.1 now (the server binds it soon after). */
  public static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  /** Waits until 127.0.0.1:{@code port} accepts connections. */
  public void awaitPort(int port, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      try (java.net.Socket s = new java.net.Socket()) {
        s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 500);
        return;
      } catch (IOException e) {
        if (!process.isAlive() || System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("server not listening on " + port + "\n--- output:\n"
              + output(), e);
        }
        Thread.sleep(50);
      }
    }
  }

  /** The last {@value #TAIL_CHARS} characters of the output. */
  public String output() {
    synchronized (tail) {
      return tail.toString();
    }
  }

  /** Writes the whole output so far (a JIT log's megabytes too) to {@code target}. */
  public void saveOutput(Path target) throws IOException {
    synchronized (tail) {
      try {
        logWriter.flush();
      } catch (IOException closed) {
        // closed with the process: the file holds all of it
      }
      try (OutputStream out = Files.newOutputStream(target)) { // not the temporary file's owner-only mode
        Files.copy(log, out);
      }
    }
  }

  /** The temporary file that holds the whole output until {@link #close}. */
  Path outputFile() {
    return log;
  }

  /** One line into the whole output's file (held: the tail's lock); a full disk loses the file, not the run. */
  private void keep(String line) {
    try {
      logWriter.write(line);
      logWriter.write('\n');
    } catch (IOException e) {
      // closed (the process was closed) or the disk is full: the tail in memory still has the end
    }
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  @Override
  public void close() {
    List<ProcessHandle> all = new ArrayList<>();
    process.toHandle().descendants().forEach(all::add);
    process.destroy();
    all.forEach(ProcessHandle::destroy);
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        all.forEach(ProcessHandle::destroyForcibly);
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (tail) {
      try {
        logWriter.close();
        Files.deleteIfExists(log);
      } catch (IOException e) {
        // a temporary file left behind
      }
    }
  }
}
