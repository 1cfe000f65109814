package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.storm.StormOptions;
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
    assertEquals(List.of("iqstream", "nchan", "haproxy", "soketi", "mercure", "mercure-history",
        "centrifugo"), o.servers(), "every server by default, so --quick runs the Go peers too");
    assertEquals(List.of(100, 300, 1000, 2000), o.levels());
    assertEquals(60_000, o.windowMs());
    assertEquals(10_000, o.runLengthMs());
    assertEquals(Path.of("/repo/bench/results"), o.outDir());
  }

  @Test
  void stormRunsAgainstTheServersThatResumeWithItsOwnDefaults() {
    BenchOptions o = parse("--storm");
    assertEquals(List.of("iqstream", "nchan"), o.servers());
    assertEquals(StormOptions.DEFAULT, o.storm());
    o = parse("--storm", "--storm-readers", "10_000", "--storm-runs", "50", "--storm-window", "0",
        "--storm-calm", "10s", "--servers", "iqstream");
    assertEquals(List.of("iqstream"), o.servers());
    assertEquals(10_000, o.storm().readers());
    assertEquals(50, o.storm().cutRuns());
    assertEquals(0, o.storm().windowMs());
    assertEquals(10_000, o.storm().calmMs());
    assertEquals(20, o.storm().eventsPerSec());
    assertEquals(null, parse().storm());
    assertThrows(IllegalArgumentException.class, () -> parse("--storm-readers", "100"));
    assertThrows(IllegalArgumentException.class, () -> parse("--storm", "--servers", "soketi"));
    assertThrows(IllegalArgumentException.class, () -> parse("--storm", "--storm-readers", "30000"));
    assertThrows(IllegalArgumentException.class, () -> parse("--storm", "--storm-readers", "10", "--storm-runs",
        "20"));
  }

  @Test
  void durableStreamsServersAndIdleSubscribers() {
    BenchOptions o = parse("--servers",
        "iqstream-durable,iqstream-durable-disk,iqstream-durable-always,iqstream-durable-never,electric-memory,"
            + "electric-wal,durable-node",
        "--idle-subscribers", "2000");
    assertEquals(BenchOptions.DURABLE_SERVERS, o.servers());
    assertEquals(2000, o.idleSubscribers());
    assertEquals(0, parse().idleSubscribers(), "not measured unless asked for");
    assertTrue(!parse().servers().contains("electric-memory"), "not in the default list: a group of their own");
    assertThrows(IllegalArgumentException.class, () -> parse("--idle-subscribers", "-1"));
    assertThrows(IllegalArgumentException.class, () -> parse("--servers", "electric"));
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
    assertEquals(1, parse().repeat(), "one pass by default");
    assertEquals(3, parse("--repeat", "3").repeat());
    assertThrows(IllegalArgumentException.class, () -> parse("--repeat", "0"));
  }

  @Test
  void peersSmokeIsTheGoPeersForAFewShortRunsWithResumesAndOtherOptionsStillApply() {
    BenchOptions o = parse("--peers-smoke");
    assertEquals(List.of("mercure", "mercure-history", "centrifugo"), o.servers());
    assertEquals(List.of(2), o.levels());
    assertEquals(2_000, o.runLengthMs());
    assertEquals(2_000, o.warmupMs());
    assertEquals(2_000, o.warmupMaxMs(), "a fixed warm-up: it says whether it works, not what it costs");
    assertEquals(3_000, o.windowMs());
    assertEquals(5_000, o.drainMs());
    assertEquals(2, o.dropEvery(), "one browser in two drops, so each peer's resume is exercised");
    BenchOptions given = parse("--servers", "centrifugo", "--levels", "3", "--run-length", "3s",
        "--warmup-max", "9s", "--drop-every", "3", "--window", "5s", "--peers-smoke");
    assertEquals(List.of("centrifugo"), given.servers());
    assertEquals(List.of(3), given.levels());
    assertEquals(3_000, given.runLengthMs());
    assertEquals(9_000, given.warmupMaxMs());
    assertEquals(3, given.dropEvery());
    assertEquals(5_000, given.windowMs());
    assertEquals(10, parse().dropEvery(), "one in ten without it");
  }

  @Test
  void iqStreamSetupsAreEveryTransportTimesEveryCollectorEachNamedByItsVariant() {
    BenchOptions o = parse("--server-transport", "epoll,io_uring", "--gc", "zgc,g1-lowpause",
        "--server-jvm-opts", " -XX:+AlwaysPreTouch  -Xss512k ");
    assertEquals(List.of("epoll", "io_uring"), o.serverTransports());
    assertEquals(List.of("zgc", "g1-lowpause"), o.gcs());
    assertEquals(List.of("-XX:+AlwaysPreTouch", "-Xss512k"), o.serverJvmOpts());
    assertEquals(List.of("iqstream[epoll,zgc]", "iqstream[epoll,g1-lowpause]",
            "iqstream[io_uring,zgc]", "iqstream[io_uring,g1-lowpause]"),
        o.iqstreamSetups().stream().map(s -> s.rowName()).toList());
    assertEquals(List.of("iqstream"), parse().iqstreamSetups().stream().map(s -> s.rowName())
        .toList(), "no option: today's one setup, today's name");
    assertEquals(List.of("iqstream[io_uring]"), parse("--server-transport=io-uring")
        .iqstreamSetups().stream().map(s -> s.rowName()).toList());
    assertEquals(List.of("iqstream[shenandoah]"), parse("--gc", "Shenandoah,shenandoah")
        .iqstreamSetups().stream().map(s -> s.rowName()).toList(), "each once");
    BenchOptions withBase = parse("--gc", "zgc", "--baseline-jar", "/tmp/old.jar",
        "--baseline-jvm-opts", "--sun-misc-unsafe-memory-access=warn");
    assertEquals(List.of("iqstream[zgc]", "iqstream-baseline"), withBase.iqstreamSetups().stream()
        .map(s -> s.rowName()).toList(), "the baseline once, after the setups, with the default flags");
    assertEquals(java.nio.file.Path.of("/tmp/old.jar"), withBase.iqstreamSetups().get(1).baselineJar());
    assertEquals(List.of("--sun-misc-unsafe-memory-access=warn"), withBase.baselineJvmOpts());
  }

  @Test
  void theLongestWarmupIs180sOrThreeTimesTheShortestUnlessGivenAndQuickStaysQuick() {
    assertEquals(180_000, parse().warmupMaxMs());
    assertEquals(180_000, parse("--warmup", "12s").warmupMaxMs());
    assertEquals(270_000, parse("--warmup", "90s").warmupMaxMs());
    assertEquals(36_000, parse("--quick").warmupMaxMs());
    assertEquals(12_000, parse("--warmup", "12s", "--warmup-max", "12s").warmupMaxMs());
    assertThrows(IllegalArgumentException.class,
        () -> parse("--warmup", "20s", "--warmup-max", "10s"));
  }

  @Test
  void theHelpListsEveryOption() {
    for (String option : List.of("--server-transport", "--gc", "--server-jvm-opts", "--warmup-max",
        "--baseline-jar", "--baseline-jvm-opts", "g1-lowpause", "shenandoah", "IQSTREAM_JVM_OPTS")) {
      assertTrue(BenchOptions.USAGE.contains(option), option);
    }
  }

  @Test
  void refusesWhatItCannotDo() {
    assertThrows(IllegalArgumentException.class, () -> parse("--servers", "reverb"));
    assertTrue(parse("--servers", "mercure,mercure-history,centrifugo").servers().contains("mercure-history"));
    assertThrows(IllegalArgumentException.class, () -> parse("--levels", "0"));
    assertThrows(IllegalArgumentException.class, () -> parse("--window"));
    assertThrows(IllegalArgumentException.class, () -> parse("--bogus", "1"));
    assertThrows(IllegalArgumentException.class, () -> parse("--nchan-publisher", "grpc"));
    assertThrows(IllegalArgumentException.class, () -> parse("--server-transport", "kqueue"));
    assertThrows(IllegalArgumentException.class, () -> parse("--gc", "cms"));
  }
}
