package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {
  private static BenchOptions parse(String... args) {
    return BenchOptions.parse(args, Path.of("/repo"));
  }

  @Test
  void defaultsFollowTheWorkload() {
    BenchOptions o = parse();
    assertEquals(List.of("iqstream", "nchan", "haproxy", "soketi"), o.servers());
    assertEquals(List.of(100, 300, 1000, 2000), o.levels());
    assertEquals(60_000, o.windowMs());
    assertEquals(10_000, o.runLengthMs());
    assertEquals(Path.of("/repo/bench/results"), o.outDir());
  }

  @Test
  void parsesTheLaunchersFlags() {
    BenchOptions o = parse("--quick", "--servers", "iqstream,nchan,floor", "--levels=100,300",
        "--window", "30s", "--warmup", "1500ms", "--no-pin");
    assertTrue(o.quick());
    assertEquals(List.of("iqstream", "nchan", "haproxy"), o.servers());
    assertEquals(List.of(100, 300), o.levels());
    assertEquals(30_000, o.windowMs());
    assertEquals(1_500, o.warmupMs());
    assertTrue(!o.pin());
    assertEquals(List.of(50, 100), parse("--quick").levels());
    assertEquals(120_000, BenchOptions.durationMs("2m"));
    assertEquals(List.of("http", "websocket"), parse().nchanPublishers(), "both by default");
    assertEquals(List.of("websocket"), parse("--nchan-publisher", "websocket").nchanPublishers());
  }

  @Test
  void refusesWhatItCannotDo() {
    assertThrows(IllegalArgumentException.class, () -> parse("--servers", "mercure"));
    assertThrows(IllegalArgumentException.class, () -> parse("--levels", "0"));
    assertThrows(IllegalArgumentException.class, () -> parse("--window"));
    assertThrows(IllegalArgumentException.class, () -> parse("--bogus", "1"));
    assertThrows(IllegalArgumentException.class, () -> parse("--nchan-publisher", "grpc"));
  }
}
