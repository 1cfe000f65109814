package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class JvmHeapTest {
  @TempDir Path dir;

  /**
   * A child JVM that holds 24 MiB, then lets it go: its live heap read through JMX holds the 24 MiB,
   * and after the release the reading (after a full collection) drops by about as much.
   */
  @Test
  @Timeout(120)
  void readsTheLiveHeapOfARunningJvmAfterAFullCollection() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Path file = dir.resolve("Hold.java");
    Files.writeString(file, """
        public class Hold {
          static byte[][] held = new byte[24][];
          public static void main(String[] a) throws Exception {
            for (int i = 0; i < held.length; i++) held[i] = new byte[1 << 20];
            System.out.println("holding");
            System.in.read();
            held = null;
            System.out.println("released");
            System.in.read();
          }
        }
        """);
    Process p = new ProcessBuilder(List.of(java, "-XX:+UseG1GC", "-Xmx256m", file.toString()))
        .redirectErrorStream(true).start();
    try (JvmHeap heap = attachWhenHolding(p)) {
      long holdingKib = heap.usedAfterFullGcKib();
      assertTrue(holdingKib >= 24 * 1024, "live heap " + holdingKib + " KiB holds the 24 MiB");
      OutputStream in = p.getOutputStream();
      in.write('\n');
      in.flush();
      BufferedReader out = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.equals("released")) {
        // JVM warnings
      }
      long releasedKib = heap.usedAfterFullGcKib();
      assertTrue(holdingKib - releasedKib >= 20 * 1024,
          "garbage not counted: " + holdingKib + " -> " + releasedKib + " KiB");
    } finally {
      p.destroyForcibly().waitFor();
    }
  }

  private static JvmHeap attachWhenHolding(Process p) throws Exception {
    BufferedReader out = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null && !line.equals("holding")) {
      // JVM warnings
    }
    assertEquals("holding", line);
    return JvmHeap.attach(p.pid());
  }
}
