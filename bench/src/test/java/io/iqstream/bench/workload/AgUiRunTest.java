package io.iqstream.bench.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class AgUiRunTest {
  private static final Pattern UUID =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void scriptHasTheWorkloadsShapeAndTiming() {
    RunScript s = new RunScript(1.0);
    Map<RunScript.Kind, Integer> counts = new EnumMap<>(RunScript.Kind.class);
    for (int i = 0; i < RunScript.EVENTS; i++) {
      counts.merge(RunScript.kind(i), 1, Integer::sum);
    }
    assertEquals(429, RunScript.EVENTS);
    assertEquals(380, counts.get(RunScript.Kind.TEXT_MESSAGE_CONTENT));
    assertEquals(40, counts.get(RunScript.Kind.TOOL_CALL_ARGS));
    assertEquals(2, counts.get(RunScript.Kind.TEXT_MESSAGE_START));
    assertEquals(RunScript.Kind.TOOL_CALL_END, RunScript.kind(RunScript.TOOL_CALL_END_INDEX));
    assertEquals(RunScript.Kind.RUN_FINISHED, RunScript.kind(428));
    // 20 ms apart, except the 1.5 s tool pause after TOOL_CALL_END
    assertEquals(20_000_000L, s.offsetNs(1) - s.offsetNs(0));
    int tce = RunScript.TOOL_CALL_END_INDEX;
    assertEquals(1_520_000_000L, s.offsetNs(tce + 1) - s.offsetNs(tce));
    double lengthS = s.lengthNs() / 1e9;
    assertTrue(lengthS > 9.9 && lengthS < 10.2, "run lasts about 10 s: " + lengthS);
    // events other than the pause span about 8.5 s
    double spanS = (s.offsetNs(428) - s.offsetNs(0) - 1_500_000_000L) / 1e9;
    assertEquals(8.5, spanS, 0.1);
    assertTrue(RunScript.insideAnswer(2) && RunScript.insideAnswer(RunScript.SECOND_ANSWER_TO));
    assertFalse(RunScript.insideAnswer(tce));
  }

  @Test
  void everyEventIsValidAgUi() throws Exception {
    RunScript script = new RunScript(1.0);
    long start = 1_780_000_000_000L;
    AgUiRun run = new AgUiRun(script, new SplittableRandom(42), start);
    StringBuilder args = new StringBuilder();
    StringBuilder dump = new StringBuilder();
    long lastTs = 0;
    for (int i = 0; i < run.eventCount(); i++) {
      String text = new String(run.event(i), StandardCharsets.UTF_8);
      dump.append(text).append('\n');
      assertFalse(text.contains("\n"), "one line");
      JsonNode e = JSON.readTree(text);
      assertEquals(RunScript.kind(i).name(), e.get("type").asText());
      assertTrue(e.get("timestamp").isIntegralNumber(), "integer epoch ms");
      long ts = e.get("timestamp").asLong();
      assertTrue(ts >= lastTs && ts >= start, "timestamps in order");
      lastTs = ts;
      for (Map.Entry<String, JsonNode> f : e.properties()) {
        assertFalse(f.getValue().isNull(), "no nulls: " + f.getKey());
        if (f.getKey().endsWith("Id")) {
          assertTrue(UUID.matcher(f.getValue().asText()).matches(), f.getKey() + " is a UUID");
        }
      }
      switch (RunScript.kind(i)) {
        case TEXT_MESSAGE_CONTENT -> {
          int n = e.get("delta").asText().length();
          assertTrue(n >= 2 && n <= 8, "token of 2-8 chars: " + n);
        }
        case TOOL_CALL_ARGS -> args.append(e.get("delta").asText());
        case TOOL_CALL_RESULT -> {
          assertEquals(8192, e.get("content").asText().length());
          assertEquals("tool", e.get("role").asText());
        }
        case RUN_STARTED, RUN_FINISHED -> {
          assertEquals(run.runId(), e.get("runId").asText());
          assertEquals(run.threadId(), e.get("threadId").asText());
        }
        default -> { }
      }
    }
    assertTrue(JSON.readTree(args.toString()).isObject(), "tool args form a JSON object");
    assertEquals(start + script.offsetNs(428) / 1_000_000L, lastTs);
    // kept for an optional check against @ag-ui/core's schemas (docs/BENCHMARK.md)
    Path out = Path.of("target", "sample-run.ndjson");
    Files.createDirectories(out.getParent());
    Files.writeString(out, dump);
  }

  @Test
  void runsDifferAndAreReproducible() {
    RunScript script = new RunScript(1.0);
    AgUiRun a = new AgUiRun(script, new SplittableRandom(1), 0);
    AgUiRun b = new AgUiRun(script, new SplittableRandom(1), 0);
    AgUiRun c = new AgUiRun(script, new SplittableRandom(2), 0);
    assertEquals(a.runId(), b.runId());
    assertFalse(a.runId().equals(c.runId()));
  }
}
