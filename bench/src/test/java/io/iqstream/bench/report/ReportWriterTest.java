package io.iqstream.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class ReportWriterTest {
  @TempDir Path dir;

  private static ResultRow row(String server, int k, double eps, double p99, double cpu) {
    return row(server, k, eps, p99, cpu, false);
  }

  private static ResultRow row(String server, int k, double eps, double p99, double cpu,
      boolean cpuUnsettled) {
    return new ResultRow(server, 1, k, 60, 1000, 1000, 1.0, eps, eps, cpu, 0.5, 1.0, p99, p99 * 2,
        p99 * 3, 0L, 7L, 10, 5.0, 9.0, 14.5, 0, 0, 0, 12.5, 1000, 2000, 30.5, 200_000L, 203_000L,
        false, null, 0.4, 1.2, 3.0, 2.0, 4.0, 100, 0, 0, 0, 0, "epoll",
        server.startsWith("iqstream") ? "epoll" : null, null, 20.0, cpuUnsettled, cpu * 1.5,
        List.of(cpu * 1.5, cpu * 1.1, cpu), List.of(cpu * 0.9, cpu, cpu * 1.2), 0.3, 0.01, 0.4, Map.of("event loops", 0.3), null, null);
  }

  @Test
  void writesResultsJsonReportAndWellFormedCharts() throws Exception {
    List<ResultRow> rows = List.of(row("iqstream", 100, 4290, 2.5, 20), row("iqstream", 300, 12870,
        3.1, 18), row("nchan", 100, 4290, 4.0, 50), ResultRow.failed("soketi", 1, 0, "no npm"));
    ReportWriter.write(dir, Map.of("command", "./iqstream bench --quick", "nproc", 2),
        Map.of("iqstream", "IQ-Stream"), rows);

    JsonNode json = new ObjectMapper().readTree(dir.resolve("results.json").toFile());
    JsonNode first = json.get("results").get(0);
    for (String field : List.of("server", "cpus", "concurrency", "events_expected",
        "events_delivered", "delivered_ratio", "events_per_sec", "cpu_us_per_event", "p50_ms",
        "p99_ms", "p999_ms", "lost_on_reconnect", "late_on_reconnect", "duplicates",
        "rss_kib_per_run", "mem_kib_per_run", "heap_kib_at_rest", "heap_kib_loaded",
        "loadgen_limited")) {
      assertTrue(first.has(field), field);
    }
    assertEquals("no npm", json.get("results").get(3).get("error").asText());

    String report = Files.readString(dir.resolve("REPORT.md"));
    assertTrue(report.contains("| 300 | iqstream | 1 | 100.00% (1000/1000) |"), report);
    assertTrue(report.contains("failed: no npm"));
    assertTrue(report.contains("| 0 (7 late) |"), "lost and late side by side: " + report);
    assertTrue(report.contains("| 30.5 (1 MiB) |"), "memory per run and at rest: " + report);
    assertTrue(report.contains("IQ-Stream vs Nchan at K = 100, the highest load both kept up with"),
        report);

    for (String svg : List.of("delivered.svg", "p99.svg", "cpu-per-event.svg")) {
      Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
          .parse(dir.resolve(svg).toFile());
      assertEquals("svg", doc.getDocumentElement().getNodeName());
      assertEquals(2, doc.getElementsByTagName("polyline").getLength(), svg + ": one line per server");
    }
  }

  @Test
  void theTableShowsResumeFiguresWithTheirCountAndTheCpuFiguresSliceRangeAndMarksAnUnsettledOne() throws Exception {
    List<ResultRow> rows = List.of(row("iqstream[zgc]", 100, 4290, 2.5, 20, true),
        row("iqstream[g1]", 100, 4290, 2.5, 30), row("haproxy-floor", 100, 4290, 2.0, 16));
    ReportWriter.write(dir, Map.of("command", "x"), Map.of(), rows);
    String report = Files.readString(dir.resolve("REPORT.md"));
    assertTrue(report.contains("| resume p50 / p99 / p99.9 ms |"), report);
    assertTrue(report.contains("| 5.00 / 9.00 / 14.50 (n 10) |"), "with the number of resumes: " + report);
    assertTrue(report.contains("| 20.0 **†** [18.0–24.0] (cold 30.0) |"),
        "unsettled, with the window's slice range and the cold figure: " + report);
    assertTrue(report.contains("| 30.0 [27.0–36.0] (cold 45.0) |"), "settled: no mark: " + report);
    assertTrue(report.contains("K = 100: IQ-Stream [zgc]'s CPU per event ÷ the floor's = 20.0 ÷ 16.0"),
        "one ratio line per IQ-Stream setup: " + report);
    assertTrue(report.contains("K = 100: IQ-Stream [g1]'s CPU per event ÷ the floor's = 30.0 ÷ 16.0"),
        report);

    JsonNode first = new ObjectMapper().readTree(dir.resolve("results.json").toFile())
        .get("results").get(0);
    assertEquals("iqstream[zgc]", first.get("server").asText());
    assertTrue(first.get("cpu_unsettled").asBoolean());
    assertEquals(14.5, first.get("resume_p999_ms").asDouble());
    assertEquals(30.0, first.get("cpu_us_per_event_cold").asDouble());
    assertEquals(3, first.get("warmup_cpu_us_per_event").size());
    assertEquals("epoll", first.get("server_transport").asText());
    assertTrue(first.has("loadgen_cpus_softirq_util"));
  }

  @Test
  void theP99ChartIsOnALogAxisWithOneTwoFiveTicks() throws Exception {
    List<ResultRow> rows = List.of(row("iqstream", 100, 4290, 1.5, 20), row("iqstream", 1000,
        42_900, 64.8, 18), row("nchan", 100, 4290, 3.0, 40), row("nchan", 1000, 36_000, 11_996, 27));
    ReportWriter.write(dir, Map.of("command", "x"), Map.of(), rows);
    Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(dir.resolve("p99.svg").toFile());
    List<String> labels = new java.util.ArrayList<>();
    var texts = doc.getElementsByTagName("text");
    for (int i = 0; i < texts.getLength(); i++) {
      labels.add(texts.item(i).getTextContent());
    }
    for (String tick : List.of("1", "2", "5", "10", "20", "50", "100", "200", "500", "1000", "2000",
        "5000", "10000", "20000")) {
      assertTrue(labels.contains(tick), tick + " in " + labels);
    }
    assertTrue(labels.contains("p99 latency (ms) (log scale)"), labels.toString());
    assertEquals(List.of(0.5, 1.0, 2.0, 5.0, 10.0), SvgChart.logTicks(0.5, 10.0));
    assertEquals(20.0, SvgChart.logTickCeil(12.0), 1e-9);
    assertEquals(10.0, SvgChart.logTickCeil(10.0), 1e-9);
    assertEquals(5.0, SvgChart.logTickFloor(6.1), 1e-9);
  }

  @Test
  void niceAxisBoundsCoverTheData() {
    assertEquals(50, SvgChart.niceCeil(41.5), 1e-9);
    assertEquals(1.2, SvgChart.niceCeil(1.1), 1e-9);
    assertEquals(10_000, SvgChart.niceCeil(9_000), 1e-9);
  }
}
