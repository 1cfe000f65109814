package io.iqstream.server.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The scripted agent run the demo plays: the shape of WORKLOAD.md (a text answer, a tool call with its
 * arguments streamed, a pause while the tool runs, its result, a second answer) as valid AG-UI 1.0
 * events, with text a person can read.
 *
 * <p>Immutable once built; any thread. Each step carries its offset from the start of the run at speed 1;
 * the {@code timestamp} field is left for {@link RunSimulator} to stamp with the step's production time.
 */
final class DemoScript {
    /** The gap between two events at speed 1 (WORKLOAD.md: about 20 ms). */
    static final long EVENT_INTERVAL_NS = 20_000_000L;
    /** The pause while the simulated tool runs (WORKLOAD.md: 1.5 s). */
    static final long TOOL_PAUSE_NS = 1_500_000_000L;
    /** A short lead-in so a person sees the run start live. */
    static final long LEAD_IN_NS = 300_000_000L;

    static final String QUESTION = "What happens to this answer if my connection drops halfway?";

    static final String FIRST_ANSWER = "Good question, and the best way to answer it is to let you watch. "
            + "Everything you are reading is an agent run: the simulated model on the server "
            + "writes its answer one token at a time, and publishes each token as an AG-UI event to "
            + "IQ-Stream, the relay between the backend and your browser. The relay appends every event to "
            + "the run's log in memory, numbers it, and sends it to this page over Server-Sent Events. Your "
            + "browser remembers the number of the last event it saw. If the connection breaks, the "
            + "browser reconnects and says \"I have everything up to event N\", and the relay replays the "
            + "rest from its log, so nothing is lost and nothing arrives twice. Press \"Cut connection\" "
            + "at any moment to try it, and keep an eye on the counters while it resumes. "
            + "Meanwhile, let me look up how the relay keeps a finished answer "
            + "around, so I can tell you how long you have to come back.";

    static final String SECOND_ANSWER = "Here is what the documentation says. A run is kept in full for "
            + "as long as the agent is writing it, and for a grace period after the last event, sixty "
            + "seconds by default. Within that window a browser that lost its connection, or a page that "
            + "was reloaded, reconnects with the id of the last event it rendered and receives exactly the "
            + "events that came after it. When the answer is complete the relay closes the stream; "
            + "if the browser tries again with the id of the final event, the relay answers 204 No Content, "
            + "which tells EventSource to stop for good. After the grace period the run's memory is freed "
            + "and a late reader gets 410 Gone, so the page can tell \"expired\" apart from \"never "
            + "existed\". The counters on the right show it: every event arrived once, with no gaps, and the "
            + "latency is measured from the moment the model produced each token. If you cut the connection "
            + "during this answer, watch the replay count: those are the events written while you were away, "
            + "delivered the instant you came back.";

    private static final String TOOL_NAME = "search_docs";

    private static final int TOOL_ARGS_FRAGMENTS = 40;

    private static final String[][] DOC_HITS = {
        {"DESIGN.md", "Resume", "Resume: a Last-Event-ID header (browsers send it by themselves on reconnect) or"
                + " ?lastEventId=N starts the stream at event N+1. Without either it starts at event 1. Never a"
                + " gap, never a duplicate."},
        {"DESIGN.md", "Retention", "How long an ended run stays readable (default 60 s), so late reconnects"
                + " still resume. Then its memory is freed; for a while after, a small bounded tombstone of its"
                + " id answers 410 Gone, so a client can tell expired from never existed (404)."},
        {"DESIGN.md", "Terminal event", "After the terminal event is written the response ends. A reconnect"
                + " whose Last-Event-ID is the run's last event gets 204, which tells a browser's EventSource to"
                + " stop reconnecting."},
        {"DESIGN.md", "Publisher lost", "If a publishing request breaks off and no new one arrives within the"
                + " publisher timeout (default 30 s), the server appends RUN_ERROR with code PUBLISHER_LOST and"
                + " ends the run, so no browser waits forever."},
        {"DESIGN.md", "Slow subscriber", "A slow subscriber is a cursor into the run's log: it costs no copy of"
                + " the events; writes pause while its socket is full and go on when it drains."},
        {"WORKLOAD.md", "Reconnects", "One browser in ten loses its connection mid-answer: it drops the"
                + " connection, waits the server's retry interval, and reconnects with Last-Event-ID, as a"
                + " browser's EventSource does."},
    };

    /** One scripted event: its offset from the run's start at speed 1, and its body without timestamp. */
    record Step(long offsetNs, ObjectNode event) {}

    private final List<Step> steps;
    private final String threadId;

    private DemoScript(List<Step> steps, String threadId) {
        this.steps = List.copyOf(steps);
        this.threadId = threadId;
    }

    /**
     * The bytes this run publishes as NDJSON: each event with its {@code timestamp} (13 digits) and a newline.
     * The demo's quota reserves a multiple of it ({@link DemoSite#RESERVE_FACTOR}) for what the relay holds.
     */
    long publishedBytes() {
        long total = 0;
        for (Step step : steps) {
            total += step.event().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                    + ",\"timestamp\":1764500000000".length() + 1;
        }
        return total;
    }

    List<Step> steps() {
        return steps;
    }

    String threadId() {
        return threadId;
    }

    /** Builds the script of one run; every id but {@code runId} is a fresh UUID. */
    static DemoScript forRun(String runId, ObjectMapper json) {
        String threadId = UUID.randomUUID().toString();
        String firstMessageId = UUID.randomUUID().toString();
        String toolCallId = UUID.randomUUID().toString();
        String toolMessageId = UUID.randomUUID().toString();
        String secondMessageId = UUID.randomUUID().toString();

        List<ObjectNode> events = new ArrayList<>();
        events.add(event(json, "RUN_STARTED").put("threadId", threadId).put("runId", runId));
        addTextMessage(json, events, firstMessageId, FIRST_ANSWER);
        events.add(event(json, "TOOL_CALL_START")
                .put("toolCallId", toolCallId)
                .put("toolCallName", TOOL_NAME)
                .put("parentMessageId", firstMessageId));
        for (String fragment : split(toolArguments(json), TOOL_ARGS_FRAGMENTS)) {
            events.add(event(json, "TOOL_CALL_ARGS").put("toolCallId", toolCallId).put("delta", fragment));
        }
        events.add(event(json, "TOOL_CALL_END").put("toolCallId", toolCallId));
        int toolResultIndex = events.size();
        events.add(event(json, "TOOL_CALL_RESULT")
                .put("messageId", toolMessageId)
                .put("toolCallId", toolCallId)
                .put("content", toolResult(json))
                .put("role", "tool"));
        addTextMessage(json, events, secondMessageId, SECOND_ANSWER);
        events.add(event(json, "RUN_FINISHED").put("threadId", threadId).put("runId", runId));

        List<Step> steps = new ArrayList<>(events.size());
        long offsetNs = LEAD_IN_NS;
        for (int i = 0; i < events.size(); i++) {
            if (i > 0) {
                offsetNs += EVENT_INTERVAL_NS;
            }
            if (i == toolResultIndex) {
                offsetNs += TOOL_PAUSE_NS;
            }
            steps.add(new Step(offsetNs, events.get(i)));
        }
        return new DemoScript(steps, threadId);
    }

    private static ObjectNode event(ObjectMapper json, String type) {
        return json.createObjectNode().put("type", type);
    }

    private static void addTextMessage(ObjectMapper json, List<ObjectNode> events, String messageId, String text) {
        events.add(event(json, "TEXT_MESSAGE_START").put("messageId", messageId).put("role", "assistant"));
        for (String token : tokens(text)) {
            events.add(event(json, "TEXT_MESSAGE_CONTENT").put("messageId", messageId).put("delta", token));
        }
        events.add(event(json, "TEXT_MESSAGE_END").put("messageId", messageId));
    }

    /**
     * Cuts text into model-like tokens of 2–8 characters: each word with its leading space, long words in
     * pieces of at most 6. Concatenating the tokens gives the text back exactly.
     */
    static List<String> tokens(String text) {
        List<String> tokens = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            int end = i;
            while (end < text.length() && text.charAt(end) == ' ') {
                end++;
            }
            while (end < text.length() && text.charAt(end) != ' ') {
                end++;
            }
            String word = text.substring(i, end);
            while (word.length() > 8) {
                tokens.add(word.substring(0, 6));
                word = word.substring(6);
            }
            if (word.length() < 2 && !tokens.isEmpty()) {
                String last = tokens.remove(tokens.size() - 1);
                word = last + word;
            }
            tokens.add(word);
            i = end;
        }
        return tokens;
    }

    /** Cuts s into exactly n non-empty pieces of near-equal length. */
    static List<String> split(String s, int n) {
        List<String> pieces = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            pieces.add(s.substring(k * s.length() / n, (k + 1) * s.length() / n));
        }
        return pieces;
    }

    private static String toolArguments(ObjectMapper json) {
        ObjectNode args = json.createObjectNode();
        args.put("query", "how long can a browser come back to a streamed answer after its connection dropped");
        ArrayNode sources = args.putArray("sources");
        sources.add("DESIGN.md").add("WORKLOAD.md").add("docs/OPERATIONS.md");
        args.put("maxResults", 6);
        args.put("language", "en");
        return args.toString();
    }

    /** About 8 KiB of search results, as in WORKLOAD.md. */
    private static String toolResult(ObjectMapper json) {
        ObjectNode result = json.createObjectNode();
        ArrayNode hits = result.putArray("results");
        int rank = 0;
        while (result.toString().length() < 8 * 1024 - 150) {
            String[] hit = DOC_HITS[rank % DOC_HITS.length];
            rank++;
            hits.addObject()
                    .put("rank", rank)
                    .put("source", hit[0])
                    .put("section", hit[1])
                    .put("score", Math.round(1000.0 / (rank + 1)) / 1000.0)
                    .put("snippet", hit[2]);
        }
        result.put("total", rank);
        return result.toString();
    }
}
