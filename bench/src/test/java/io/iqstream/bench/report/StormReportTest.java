package io.iqstream.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.storm.StormOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StormReportTest {
  @TempDir Path dir;

  @Test
  void everyRowHasAsManyCellsAsTheHeadAndTheJsonCarriesTheFigures() throws Exception {
    StormRow ok = new StormRow("iqstream", 1, 2000, 20, 50, 20, 1000, 2000, 2000, true, 1030.5, 0.2, 21.1, 21.5,
        24.5, 310.0, 0.4, 0, 0, 0, 0, 0, 1.0, 4.5, 1.2, 20.9, 1000, 1000, 0, 0, 0, 0, "1000-2000", 0.1, 2.5, null);
    StormRow failed = StormRow.failed("nchan", 1, StormOptions.DEFAULT, "not installable | here");
    String table = StormReport.table(List.of(ok, failed));
    List<String> lines = table.lines().toList();
    int cells = cells(lines.get(0));
    for (String line : lines) {
      assertEquals(cells, cells(line), line);
    }
    assertTrue(lines.get(2).contains("| 1030.5 |") && lines.get(2).contains("| 0.2 / 21.1 / 21.5 |"), lines.get(2));
    assertTrue(lines.get(3).contains("failed: not installable / here"), lines.get(3));
    StormReport.write(dir, Map.of("command", "./iqstream bench --storm"), Map.of(), List.of(ok, failed));
    String json = Files.readString(dir.resolve("results.json"));
    assertTrue(json.contains("\"storm_ms\" : 1030.5") && json.contains("\"retry_ms\" : \"1000-2000\""), json);
    assertTrue(Files.readString(dir.resolve("REPORT.md")).contains(table));
  }

  private static int cells(String line) {
    return line.length() - line.replace("|", "").length();
  }
}
