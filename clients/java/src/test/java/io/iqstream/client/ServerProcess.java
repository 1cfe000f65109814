package io.iqstream.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * The real IQ-Stream server as a child process on an ephemeral loopback port. The jar comes from
 * env IQSTREAM_JAR, else system property iqstream.jar, else ../server/target/iqstream-server.jar;
 * if it is missing the calling test is skipped with the reason printed, except under CI (CI=true),
 * where it fails. Netty's leak detector runs at paranoid in it, and {@link #close} fails when the
 * server printed a {@code LEAK:} report (kept apart from the truncated output, so none is missed).
 */
final class ServerProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on http://[^:\\s]+:(\\d+)");

  final String secret;
  final int port;
  final URI baseUri;
  private final Process process;
  private final Thread reader;
  private final List<String> leaks;

  private ServerProcess(Process process, Thread reader, List<String> leaks, String secret, int port) {
    this.process = process;
    this.reader = reader;
    this.leaks = leaks;
    this.secret = secret;
    this.port = port;
    this.baseUri = URI.create("http://127.0.0.1:" + port);
  }

  static Path jar() {
    String env = System.getenv("IQSTREAM_JAR");
    String prop = System.getProperty("iqstream.jar");
    String path = env != null && !env.isBlank() ? env : prop != null && !prop.isBlank() ? prop : "../server/target/iqstream-server.jar";
    return Path.of(path).toAbsolutePath().normalize();
  }

  static ServerProcess start(String... flags) throws Exception {
    byte[] random = new byte[24];
    new SecureRandom().nextBytes(random);
    return startWithSecret(HexFormat.of().formatHex(random), flags); // 48 bytes of UTF-8
  }

  /** A server that accepts the same tokens as another one (the same JWT secret). */
  static ServerProcess startWithSecret(String secret, String... flags) throws Exception {
    Path jar = jar();
    if (!Files.isRegularFile(jar)) {
      String reason = "IQ-Stream server jar not found at " + jar + " (build server/ first or set IQSTREAM_JAR); skipping";
      if ("true".equals(System.getenv("CI"))) {
        throw new IllegalStateException("IQ-Stream server jar not found at " + jar + " (CI=true: not skipped)");
      }
      System.out.println(reason);
      Assumptions.abort(reason);
    }
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-Dio.netty.leakDetection.level=paranoid", "-jar", jar.toString(), "serve",
        "--host", "127.0.0.1", "--jwt-secret", secret));
    if (!List.of(flags).contains("--port")) {
      command.addAll(List.of("--port", "0"));
    }
    if (!List.of(flags).contains("--warmup")) {
      command.addAll(List.of("--warmup", "0")); // the client's tests do not need the server's JIT warm-up
    }
    command.addAll(List.of(flags));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    StringBuilder output = new StringBuilder();
    List<String> leaks = Collections.synchronizedList(new ArrayList<>());
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          synchronized (output) {
            if (output.length() < 20_000) output.append(line).append('\n');
          }
          if (line.contains("LEAK:")) leaks.add(line);
          Matcher m = LISTENING.matcher(line);
          if (m.find()) port.complete(Integer.parseInt(m.group(1)));
        }
      } catch (IOException ignored) {
        // process ended
      }
      port.completeExceptionally(new IllegalStateException("server exited before listening"));
    }, "iqstream-server-output");
    reader.setDaemon(true);
    reader.start();
    try {
      return new ServerProcess(process, reader, leaks, secret, port.get(60, TimeUnit.SECONDS));
    } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
      process.destroyForcibly();
      synchronized (output) {
        throw new IllegalStateException("IQ-Stream did not start: " + e + "\n" + output, e);
      }
    }
  }

  /** A token with these rights, e.g. {@code token("{\"publish\":[\"*\"]}")}. */
  String token(String rightsJson) {
    long exp = System.currentTimeMillis() / 1000 + 600;
    return Jwt.hs256(secret, "{\"sub\":\"test\",\"exp\":" + exp + ",\"iqstream\":" + rightsJson + "}");
  }

  String publishToken() {
    return token("{\"publish\":[\"*\"],\"subscribe\":[\"*\"]}");
  }

  IqStreamClient client(URI base, String token) {
    return IqStreamClient.builder(base).token(token).retry(8, java.time.Duration.ofMillis(100), java.time.Duration.ofSeconds(1)).build();
  }

  /** SIGKILL: the node dies at once, with its runs (what a crash or an OOM kill does). */
  void kill() throws InterruptedException {
    process.destroyForcibly().waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    // SIGTERM through the handle: Process.destroy() would also close the pipe and lose what the server prints last
    process.toHandle().destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
    reader.join(10_000);
    if (!leaks.isEmpty()) {
      // a leak fails the test; IQSTREAM_LEAKS=warn only warns (see scripts/server-for-tests.sh)
      if ("warn".equals(System.getenv("IQSTREAM_LEAKS"))) {
        System.err.println("WARNING (IQSTREAM_LEAKS=warn): Netty reported leaked buffers in the server: " + leaks);
        return;
      }
      throw new AssertionError("Netty reported leaked buffers in the server: " + leaks);
    }
  }
}
