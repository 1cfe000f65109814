package io.iqstream.bench.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class IqStreamServerTest {
  /** The server's own count beside the memory figure reads whole gauges, and says -1 for one an older server lacks. */
  @Test
  void readsGaugesFromTheMetricsTextAndMarksAMissingOne() {
    String metrics = "iqstream_runs_active_total 7\n"
        + "# HELP iqstream_runs_active Runs held in memory (open or within retention).\n"
        + "# TYPE iqstream_runs_active gauge\n"
        + "iqstream_runs_active 2081\n"
        + "iqstream_direct_memory_used_bytes 25165824\n";
    assertEquals(2081, IqStreamServer.gauge(metrics, "iqstream_runs_active"));
    assertEquals(25165824, IqStreamServer.gauge(metrics, "iqstream_direct_memory_used_bytes"));
    assertEquals(-1, IqStreamServer.gauge(metrics, "iqstream_direct_memory_active_bytes"));
  }

  /**
   * The traced row is the real server with traces on: requests that carry a sampled {@code traceparent} (the
   * parent-based 1% sampler follows the caller) are exported over OTLP/HTTP to the row's sink, which has them once
   * the server has shut down (its SDK flushes then); the untraced row starts no sink.
   */
  @Test
  @Timeout(120)
  void theTracedRowExportsItsSpansToTheSink() throws Exception {
    Path repo = Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize();
    Path jar = IqStreamServer.defaultJar(repo);
    if (!Files.isRegularFile(jar)) {
      assertTrue(!"true".equals(System.getenv("CI")), "no server jar at " + jar + " (CI=true)");
      Assumptions.abort("no server jar at " + jar);
    }
    List<String> flags = IqStreamSetup.DEFAULT.jvmFlags("-Xmx256m");
    IqStreamServer traced = IqStreamServer.traced(jar, IqStreamSetup.DEFAULT, flags);
    assertEquals("iqstream-traced", traced.name());
    OtlpSink sink;
    try {
      traced.start(Placement.NONE, 1, null);
      sink = traced.otlpSink();
      try (HttpClient client = HttpClient.newHttpClient()) {
        for (int i = 0; i < 3; i++) {
          HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                  URI.create("http://127.0.0.1:" + traced.port() + "/v1/runs/traced-" + i))
              .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e473" + i + "-00f067aa0ba902b7-01").build(),
              HttpResponse.BodyHandlers.ofString());
          assertEquals(401, r.statusCode(), "no token: refused, and traced all the same");
        }
      }
    } finally {
      traced.close();
    }
    assertTrue(sink.exports() >= 1, "the spans reached the sink: " + sink.exports() + " export requests");
    assertTrue(sink.bytes() > 0);

    IqStreamServer plain = new IqStreamServer(jar, IqStreamSetup.DEFAULT, flags);
    try {
      plain.start(Placement.NONE, 1, null);
      assertEquals(null, plain.otlpSink());
    } finally {
      plain.close();
    }
  }

  /**
   * The fsync rows are the real server under that policy: the row's name says it, and the server's own start line
   * says the policy it runs (the bench passes --fsync); the batch row passes none and the server runs its default.
   * The jar's help is what tells a build with the storage layer from one before it.
   */
  @Test
  @Timeout(120)
  void theFsyncRowsRunTheServerUnderTheirPolicy() throws Exception {
    Path repo = Path.of(System.getProperty("iqstream.repo", "..")).toAbsolutePath().normalize();
    Path jar = IqStreamServer.defaultJar(repo);
    if (!Files.isRegularFile(jar)) {
      assertTrue(!"true".equals(System.getenv("CI")), "no server jar at " + jar + " (CI=true)");
      Assumptions.abort("no server jar at " + jar);
    }
    assertTrue(IqStreamServer.helpNames(jar, "--durability"));
    assertTrue(!IqStreamServer.helpNames(jar, "--no-such-flag"));
    List<String> flags = IqStreamSetup.DEFAULT.jvmFlags("-Xmx256m");
    for (String[] row : new String[][] {{"always", "iqstream-durable-always"}, {"never", "iqstream-durable-never"},
        {null, "iqstream-durable-disk"}}) {
      IqStreamServer server = row[0] == null
          ? IqStreamServer.durableStreamsOnDisk(jar, IqStreamSetup.DEFAULT, flags)
          : IqStreamServer.durableStreamsOnDisk(jar, IqStreamSetup.DEFAULT, flags, row[0]);
      assertEquals(row[1], server.name());
      try {
        server.install();
        server.start(Placement.NONE, 1, null);
        String policy = row[0] == null ? "batch" : row[0];
        String out = server.process.output();
        assertTrue(out.contains("(--fsync " + policy + ","), out);
        assertTrue(server.description().contains("--fsync " + policy), server.description());
      } finally {
        server.close();
      }
    }
  }
}
