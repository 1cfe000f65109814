package io.iqstream.bench.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Runs a peer's install script from bench/peers (idempotent). Runner's thread. */
final class Peers {
  private Peers() {}

  static void install(Path peersDir, String script) throws IOException, InterruptedException {
    Path path = peersDir.resolve(script);
    if (!Files.isRegularFile(path)) {
      throw new IOException("missing install script " + path);
    }
    Process p = new ProcessBuilder("sh", path.toString()).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(15, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IOException(script + " failed: " + new String(out, StandardCharsets.UTF_8).trim());
    }
  }

  static String firstLine(String... cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor(10, TimeUnit.SECONDS);
      String[] lines = out.trim().split("\n");
      return lines.length == 0 ? "" : lines[0].trim();
    } catch (IOException | InterruptedException e) {
      return "unknown";
    }
  }
}
