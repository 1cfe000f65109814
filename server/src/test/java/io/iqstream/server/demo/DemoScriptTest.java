package io.iqstream.server.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class DemoScriptTest {
    private final ObjectMapper json = new ObjectMapper();
    private final DemoScript script = DemoScript.forRun("demo-run-1", json);

    private List<String> types() {
        List<String> types = new ArrayList<>();
        for (DemoScript.Step step : script.steps()) {
            types.add(step.event().get("type").asText());
        }
        return types;
    }

    @Test
    void hasTheShapeOfTheWorkloadRun() {
        List<String> types = types();
        assertEquals(429, types.size());
        Map<String, Integer> expected = new LinkedHashMap<>();
        expected.put("RUN_STARTED", 1);
        expected.put("TEXT_MESSAGE_START", 1);
        expected.put("TEXT_MESSAGE_CONTENT", 180);
        expected.put("TEXT_MESSAGE_END", 1);
        expected.put("TOOL_CALL_START", 1);
        expected.put("TOOL_CALL_ARGS", 40);
        expected.put("TOOL_CALL_END", 1);
        expected.put("TOOL_CALL_RESULT", 1);
        expected.put("TEXT_MESSAGE_START#2", 1);
        expected.put("TEXT_MESSAGE_CONTENT#2", 200);
        expected.put("TEXT_MESSAGE_END#2", 1);
        expected.put("RUN_FINISHED", 1);
        // run-length encode the sequence, marking the second message
        Map<String, Integer> actual = new LinkedHashMap<>();
        boolean second = false;
        for (String type : types) {
            if (type.equals("TOOL_CALL_RESULT")) {
                second = true;
            }
            String key = second && type.startsWith("TEXT_MESSAGE") ? type + "#2" : type;
            actual.merge(key, 1, Integer::sum);
        }
        assertEquals(expected, actual);
        assertEquals(List.copyOf(expected.keySet()), List.copyOf(actual.keySet()), "order of the phases");
    }

    @Test
    void isValidAgUi() {
        for (DemoScript.Step step : script.steps()) {
            JsonNode event = step.event();
            assertFalse(event.has("timestamp"), "the simulator stamps the production time");
            for (Map.Entry<String, JsonNode> field : event.properties()) {
                assertFalse(field.getValue().isNull(), "no nulls: " + event);
                assertTrue(field.getValue().isTextual() || field.getKey().equals("timestamp"), "fields are strings: " + event);
                if (field.getKey().endsWith("Id") && !field.getKey().equals("runId")) {
                    UUID.fromString(field.getValue().asText()); // throws if not a UUID
                }
            }
            switch (event.get("type").asText()) {
                case "RUN_STARTED", "RUN_FINISHED" -> {
                    assertEquals("demo-run-1", event.get("runId").asText());
                    assertEquals(script.threadId(), event.get("threadId").asText());
                }
                case "TEXT_MESSAGE_START" -> assertEquals("assistant", event.get("role").asText());
                case "TEXT_MESSAGE_CONTENT" -> {
                    int length = event.get("delta").asText().length();
                    assertTrue(length >= 2 && length <= 8, "a token of 2-8 characters: " + event);
                }
                case "TOOL_CALL_START" -> assertEquals("search_docs", event.get("toolCallName").asText());
                case "TOOL_CALL_RESULT" -> {
                    assertEquals("tool", event.get("role").asText());
                    assertTrue(event.get("content").asText().length() >= 8000, "about 8 KiB of result");
                }
                default -> {}
            }
        }
    }

    @Test
    void deltasSpellTheAnswersAndTheArguments() throws Exception {
        StringBuilder text = new StringBuilder();
        StringBuilder args = new StringBuilder();
        for (DemoScript.Step step : script.steps()) {
            JsonNode event = step.event();
            switch (event.get("type").asText()) {
                case "TEXT_MESSAGE_CONTENT" -> text.append(event.get("delta").asText());
                case "TOOL_CALL_ARGS" -> args.append(event.get("delta").asText());
                default -> {}
            }
        }
        assertEquals(DemoScript.FIRST_ANSWER + DemoScript.SECOND_ANSWER, text.toString());
        assertTrue(json.readTree(args.toString()).has("query"), "the arguments are one JSON object");
    }

    @Test
    void spacesEventsTwentyMillisecondsApartWithAPauseForTheTool() {
        List<DemoScript.Step> steps = script.steps();
        assertEquals(DemoScript.LEAD_IN_NS, steps.get(0).offsetNs());
        for (int i = 1; i < steps.size(); i++) {
            long gapNs = steps.get(i).offsetNs() - steps.get(i - 1).offsetNs();
            boolean toolResult = steps.get(i).event().get("type").asText().equals("TOOL_CALL_RESULT");
            assertEquals(DemoScript.EVENT_INTERVAL_NS + (toolResult ? DemoScript.TOOL_PAUSE_NS : 0), gapNs, "gap before " + i);
        }
    }

    @Test
    void tokensRejoinToTheText() {
        String text = "Hi, a b extraordinarily long words, x";
        assertEquals(text, String.join("", DemoScript.tokens(text)));
        for (String token : DemoScript.tokens(text)) {
            assertTrue(token.length() >= 2 && token.length() <= 8, token);
        }
    }
}
