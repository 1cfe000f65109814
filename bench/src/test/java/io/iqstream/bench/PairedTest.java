package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.bench.server.IqStreamServer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class PairedTest {
  @Test
  void comparesSliceBySliceAndSkipsSlicesEitherSideLacks() {
    Paired.Window a = new Paired.Window(40, Arrays.asList(40.0, 50.0, null, 20.0), 1, 2, 0.5, false);
    Paired.Window b = new Paired.Window(30, Arrays.asList(30.0, 45.0, 10.0, 30.0, 99.0), 1, 2, 0.4, false);
    Paired.Ratio r = Paired.Ratio.of(a, b);
    assertEquals(0.75, r.window(), 1e-9);
    assertEquals(List.of(0.75, 0.9, 1.5), r.slices());
    assertEquals(0.9, Paired.median(r.slices()), 1e-9);
  }

  @Test
  void medianAndGeometricMean() {
    assertEquals(2.5, Paired.median(List.of(4.0, 1.0, 3.0, 2.0)), 1e-9);
    assertTrue(Double.isNaN(Paired.median(List.of())));
    // a pair that halves and one that doubles cancel out
    assertEquals(1.0, Paired.geometricMean(List.of(0.5, 2.0)), 1e-9);
  }

  @Test
  void refusesWhatItCannotRunBeforeStartingAnything(@TempDir Path dir) throws Exception {
    Path jar = Files.writeString(dir.resolve("a.jar"), "x");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, "UTF-8"));
    try {
      assertEquals(2, Paired.run(List.of(jar.toString()), dir));
      assertEquals(2, Paired.run(List.of(jar.toString(), dir.resolve("missing.jar").toString()), dir));
      assertEquals(2, Paired.run(List.of(jar.toString(), jar.toString(), "--level"), dir));
      assertEquals(2, Paired.run(List.of(jar.toString(), jar.toString(), "--servers", "nchan"), dir));
      assertEquals(2, Paired.run(List.of(jar.toString(), jar.toString(), "--pairs", "0"), dir));
      assertEquals(2, Paired.run(List.of(jar.toString(), jar.toString(), "--server-b", "nchan"), dir));
    } finally {
      System.setErr(err);
    }
    String text = captured.toString("UTF-8");
    assertTrue(text.contains("two server jars are needed"), text);
    assertTrue(text.contains("no such jar: " + dir.resolve("missing.jar")), text);
    assertTrue(text.contains("--level needs a value"), text);
    assertTrue(text.contains("unknown option: --servers"), text);
    assertTrue(text.contains("--pairs must be at least 1"), text);
    assertTrue(text.contains("--server-a / --server-b: iqstream, iqstream-traced or iqstream-disk, not nchan"), text);
    // nothing was started: no results folder
    assertTrue(Files.notExists(dir.resolve("bench/results")));
  }

  /**
   * The real thing, small: the server jar against itself, one pair of benches at once (each its own server and
   * generator, unpinned), and a summary whose ratios are the two windows' own figures.
   */
  @Test
  @Timeout(240)
  void onePairOfTheSameJarMeasuredAtOnceGivesTheRatioOfItsTwoWindows(@TempDir Path out) throws Exception {
    Path repo = Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize();
    Path jar = IqStreamServer.defaultJar(repo);
    if (!Files.isRegularFile(jar)) {
      assertTrue(!"true".equals(System.getenv("CI")), "no server jar at " + jar + " (CI=true)");
      Assumptions.abort("no server jar at " + jar);
    }
    int code = Paired.run(List.of(jar.toString(), jar.toString(), "--pairs", "1", "--level", "10", "--warmup", "3s",
        "--window", "4s", "--run-length", "2s", "--drain", "10s", "--no-pin", "--out", out.toString()), repo);
    assertEquals(0, code);
    Path dir;
    try (Stream<Path> s = Files.list(out)) {
      dir = s.filter(p -> p.getFileName().toString().startsWith("paired-")).findFirst().orElseThrow();
    }
    double[] cpu = new double[2];
    for (int i = 0; i < 2; i++) {
      JsonNode r = new ObjectMapper().readTree(dir.resolve("pair-1-" + "AB".charAt(i) + "/latest/results.json")
          .toFile()).get("results").get(0);
      assertEquals(r.get("events_expected").asLong(), r.get("events_delivered").asLong(), "100% delivery");
      assertEquals(3.0, r.get("warmup_s").asDouble(), 0.5, "the fixed warm-up, the same for both");
      cpu[i] = r.get("cpu_us_per_event").asDouble();
      assertTrue(cpu[i] > 0);
    }
    String summary = Files.readString(dir.resolve("PAIRED.md"));
    assertTrue(summary.contains(String.format(java.util.Locale.ROOT, "| 1 | %.1f | %.1f | %.3f |", cpu[0], cpu[1],
        cpu[1] / cpu[0])), summary);
    assertTrue(summary.contains("over the windows (geometric mean of 1)"), summary);
  }
}
