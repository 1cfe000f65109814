package io.iqstream.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.load.Transport;
import io.iqstream.bench.report.StormRow;
import io.iqstream.bench.server.IqStreamServer;
import io.iqstream.bench.server.IqStreamSetup;
import io.iqstream.bench.server.Placement;
import io.iqstream.bench.storm.StormOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reconnect storm in CI: the server jar started as a process, 1,000 readers on 4 runs (and 2 calm runs) cut at
 * once and resuming with Last-Event-ID within half a second, twice (a warm-up storm, then the one counted). Counts only: every reader resumed, every event
 * published reached every reader once, none lost, none duplicated.
 */
class ReconnectStormTest {

  @Test
  @Timeout(240)
  void everyReaderCutAtOnceResumesWithNothingLostOrDuplicated() throws Exception {
    Path repo = Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize();
    Path jar = IqStreamServer.defaultJar(repo);
    if (!Files.isRegularFile(jar)) {
      assertFalse("true".equals(System.getenv("CI")), "no server jar at " + jar + " (CI=true)");
      Assumptions.abort("no server jar at " + jar);
    }
    StormOptions options = new StormOptions(1_000, 4, 2, 5, 20, 500, 1_000, 1);
    IqStreamServer server = new IqStreamServer(jar, IqStreamSetup.DEFAULT,
        IqStreamSetup.DEFAULT.jvmFlags(System.getenv("IQSTREAM_JVM_OPTS")));
    StormRow row;
    try {
      row = ReconnectStorms.measure(server, options, Placement.NONE, 1, Transport.parse("auto"), 1);
    } finally {
      server.close();
    }
    assertNull(row.error());
    assertEquals(1_000, row.cut(), "every reader of the cut runs was cut");
    assertEquals(1_000, row.resumed(), "every reader got every event published before it reconnected");
    assertTrue(row.allResumed());
    assertEquals(0, row.lost(), "lost");
    assertEquals(0, row.late(), "late: a reader not back");
    assertEquals(0, row.duplicates(), "duplicated");
    assertTrue(row.expected() >= 1_010 * 10L, "every reader was sent at least half a second of events: "
        + row.expected());
    assertEquals(row.expected(), row.delivered(), "every event published reached every reader once");
    assertEquals(0, row.notOk(), "every answer was 200");
    assertEquals(0, row.publisherFailures());
    assertTrue(row.calmP99Ms() != null && row.stormP99Ms() != null, "the calm runs' latency read both times");
    // the server's own --retry-jitter: the retry: values its streams were given are spread
    List<String> range = List.of(row.retryMs().split("-"));
    assertTrue(Long.parseLong(range.get(1)) > Long.parseLong(range.get(0)), "retry: spread " + row.retryMs());
  }
}
