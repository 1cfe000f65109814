package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A server's output as the bench keeps it: whole beside the results, its tail for error messages. */
class ServerProcessTest {
  @TempDir Path dir;

  @Test
  @Timeout(30)
  void aLongOutputIsSavedWholeWhileOnlyItsTailStaysInMemory() throws Exception {
    // 20,000 numbered lines (about 250 KB, a JIT log's kind of output), then the readiness line
    String script = "i=1; while [ $i -le 20000 ]; do echo \"line $i of the output\"; i=$((i+1)); done; "
        + "echo ready; sleep 30";
    try (ServerProcess p = ServerProcess.start(List.of("sh", "-c", script), Placement.NONE, null,
        line -> line.equals("ready"))) {
      p.awaitReady(20_000);
      Path saved = dir.resolve("server.log");
      p.saveOutput(saved);
      List<String> lines = Files.readAllLines(saved);
      assertEquals(20_001, lines.size(), "every line up to the readiness line");
      assertEquals("line 1 of the output", lines.get(0));
      assertEquals("line 20000 of the output", lines.get(19_999));
      assertEquals("ready", lines.get(20_000));
      String tail = p.output();
      assertTrue(tail.length() <= ServerProcess.TAIL_CHARS, "the tail is bounded: " + tail.length());
      assertTrue(tail.endsWith("line 20000 of the output\nready\n"), "the tail ends where the output does");
      assertFalse(tail.contains("line 1 of the output\n"), "the tail does not hold the start");
    }
  }

  @Test
  @Timeout(30)
  void theTemporaryFileGoesWithTheProcess() throws Exception {
    ServerProcess p = ServerProcess.start(List.of("sh", "-c", "echo ready; sleep 30"), Placement.NONE, null,
        line -> line.equals("ready"));
    p.awaitReady(20_000);
    Path saved = dir.resolve("before-close.log");
    p.saveOutput(saved);
    assertEquals(List.of("ready"), Files.readAllLines(saved));
    Path file = p.outputFile();
    assertTrue(Files.exists(file), "the whole output is in " + file);
    p.close();
    assertFalse(Files.exists(file), "the whole output's temporary file is deleted on close");
  }
}
