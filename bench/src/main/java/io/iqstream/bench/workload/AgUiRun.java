package io.iqstream.bench.workload;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * One concrete agent run: its ids and the JSON text of its 429 AG-UI events, each valid against the
 * AG-UI 1.0 schemas of {@code @ag-ui/core} (UUID ids, {@code timestamp} an integer of epoch
 * milliseconds, optional fields left out rather than null).
 *
 * <p>The bytes of every event are made once, when the run starts, and kept until the run is done: the
 * publisher sends them and the stream checker compares what a subscriber received against them.
 * Confined to the generator thread that owns the run.
 */
public final class AgUiRun {
  private static final String[] WORDS = {
    " the", " a", " run", " stream", " token", " model", " event", " relay", " agent", " tool",
    " answer", " reads", " writes", " fast", " data", " with", " and", " of", " to", " in", "ing",
    "ed", " on", " by", " is", ".", ",", " Hello", " world", " cache"
  };
  private static final String TOOL_ARGS =
      "{\"query\":\"latest benchmark results for resumable SSE relays\",\"limit\":10,"
          + "\"filters\":{\"since\":\"2026-01-01\",\"kind\":\"report\"},\"lang\":\"en\"}";
  /** 8 KiB of tool result text, the same for every run. */
  private static final String TOOL_RESULT = buildToolResult(8192);
  private static final String TOOL_NAME = "search";

  private final String runId;
  private final String threadId;
  private final byte[][] events;

  /**
   * @param startEpochMs epoch time of the run's start; each event's {@code timestamp} is this plus its
   *     offset in {@code script}
   */
  public AgUiRun(RunScript script, SplittableRandom random, long startEpochMs) {
    this.runId = uuid(random);
    this.threadId = uuid(random);
    String firstMessageId = uuid(random);
    String toolCallId = uuid(random);
    String toolMessageId = uuid(random);
    String secondMessageId = uuid(random);
    this.events = new byte[RunScript.EVENTS][];
    StringBuilder sb = new StringBuilder(256);
    int argsIndex = 0;
    for (int i = 0; i < RunScript.EVENTS; i++) {
      long ts = startEpochMs + script.offsetNs(i) / 1_000_000L;
      RunScript.Kind kind = RunScript.kind(i);
      sb.setLength(0);
      sb.append("{\"type\":\"").append(kind.name()).append('"');
      switch (kind) {
        case RUN_STARTED, RUN_FINISHED ->
            field(field(sb, "threadId", threadId), "runId", runId);
        case TEXT_MESSAGE_START ->
            field(field(sb, "messageId", i < RunScript.TOOL_CALL_END_INDEX ? firstMessageId
                : secondMessageId), "role", "assistant");
        case TEXT_MESSAGE_CONTENT ->
            field(field(sb, "messageId", i < RunScript.TOOL_CALL_END_INDEX ? firstMessageId
                : secondMessageId), "delta", token(random));
        case TEXT_MESSAGE_END ->
            field(sb, "messageId", i < RunScript.TOOL_CALL_END_INDEX ? firstMessageId
                : secondMessageId);
        case TOOL_CALL_START ->
            field(field(field(sb, "toolCallId", toolCallId), "toolCallName", TOOL_NAME),
                "parentMessageId", firstMessageId);
        case TOOL_CALL_ARGS -> {
          // 40 non-empty fragments that concatenate to the arguments object
          int n = RunScript.TOOL_ARGS_DELTAS;
          int from = argsIndex * TOOL_ARGS.length() / n;
          int to = (argsIndex + 1) * TOOL_ARGS.length() / n;
          argsIndex++;
          field(field(sb, "toolCallId", toolCallId), "delta", TOOL_ARGS.substring(from, to));
        }
        case TOOL_CALL_END -> field(sb, "toolCallId", toolCallId);
        case TOOL_CALL_RESULT ->
            field(field(field(field(sb, "messageId", toolMessageId), "toolCallId", toolCallId),
                "content", TOOL_RESULT), "role", "tool");
        default -> throw new IllegalStateException("no encoding for " + kind);
      }
      sb.append(",\"timestamp\":").append(ts).append('}');
      events[i] = sb.toString().getBytes(StandardCharsets.UTF_8);
    }
  }

  public String runId() {
    return runId;
  }

  public String threadId() {
    return threadId;
  }

  /** The JSON text of event {@code index} (0-based), one line, no trailing newline. */
  public byte[] event(int index) {
    return events[index];
  }

  public int eventCount() {
    return events.length;
  }

  private static StringBuilder field(StringBuilder sb, String name, String value) {
    sb.append(",\"").append(name).append("\":\"");
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('"');
  }

  /** A token of 2–8 characters. */
  private static String token(SplittableRandom random) {
    String w = WORDS[random.nextInt(WORDS.length)];
    while (w.length() < 2) {
      w = w + WORDS[random.nextInt(WORDS.length)];
    }
    return w.length() > 8 ? w.substring(0, 8) : w;
  }

  private static String uuid(SplittableRandom random) {
    long msb = (random.nextLong() & ~0xF000L) | 0x4000L;
    long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
    return new UUID(msb, lsb).toString();
  }

  private static String buildToolResult(int length) {
    StringBuilder sb = new StringBuilder(length);
    int n = 0;
    while (sb.length() < length) {
      sb.append("Result ").append(n++).append(": relays keep each run's events in order;");
      sb.append(" a browser that reconnects resumes from its last event id. ");
    }
    sb.setLength(length);
    return sb.toString();
  }
}
