package io.iqstream.bench.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process started for the bench (optionally under {@code taskset -c}), with its output kept
 * in a log file and scanned for a readiness line. Runner's thread.
 */
public final class ServerProcess implements AutoCloseable {
  private final Process process;
  private final CompletableFuture<String> ready = new CompletableFuture<>();
  private final StringBuilder tail = new StringBuilder();

  private ServerProcess(Process process, Predicate<String> readyLine) {
    this.process = process;
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          synchronized (tail) {
            tail.append(line).append('\n');
            if (tail.length() > 8000) {
              tail.delete(0, tail.length() - 8000);
            }
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

  public String output() {
    synchronized (tail) {
      return tail.toString();
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
  }
}
