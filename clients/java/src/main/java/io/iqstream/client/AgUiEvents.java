package io.iqstream.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Builders for the AG-UI 1.0 events an agent run is made of, as maps the publisher writes with
 * Jackson. Each carries {@code timestamp} (epoch milliseconds); optional fields are left out.
 * Any other event can be sent as a Map, a record or a JSON string.
 *
 * <p>Stateless; any thread.
 */
public final class AgUiEvents {
  private AgUiEvents() {}

  public static Map<String, Object> runStarted(String threadId, String runId) {
    return event("RUN_STARTED", "threadId", threadId, "runId", runId);
  }

  public static Map<String, Object> runFinished(String threadId, String runId) {
    return event("RUN_FINISHED", "threadId", threadId, "runId", runId);
  }

  /** A run that failed; {@code code} may be null. */
  public static Map<String, Object> runError(String message, String code) {
    Map<String, Object> e = event("RUN_ERROR", "message", message);
    if (code != null) e.put("code", code);
    return e;
  }

  public static Map<String, Object> textMessageStart(String messageId) {
    return event("TEXT_MESSAGE_START", "messageId", messageId, "role", "assistant");
  }

  public static Map<String, Object> textMessageContent(String messageId, String delta) {
    return event("TEXT_MESSAGE_CONTENT", "messageId", messageId, "delta", delta);
  }

  public static Map<String, Object> textMessageEnd(String messageId) {
    return event("TEXT_MESSAGE_END", "messageId", messageId);
  }

  /** {@code parentMessageId} may be null. */
  public static Map<String, Object> toolCallStart(String toolCallId, String toolCallName, String parentMessageId) {
    Map<String, Object> e = event("TOOL_CALL_START", "toolCallId", toolCallId, "toolCallName", toolCallName);
    if (parentMessageId != null) e.put("parentMessageId", parentMessageId);
    return e;
  }

  public static Map<String, Object> toolCallArgs(String toolCallId, String delta) {
    return event("TOOL_CALL_ARGS", "toolCallId", toolCallId, "delta", delta);
  }

  public static Map<String, Object> toolCallEnd(String toolCallId) {
    return event("TOOL_CALL_END", "toolCallId", toolCallId);
  }

  public static Map<String, Object> toolCallResult(String messageId, String toolCallId, String content) {
    return event("TOOL_CALL_RESULT", "messageId", messageId, "toolCallId", toolCallId, "content", content, "role", "tool");
  }

  private static Map<String, Object> event(String type, Object... keyValues) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("type", type);
    for (int i = 0; i < keyValues.length; i += 2) {
      if (keyValues[i + 1] == null) throw new IllegalArgumentException(keyValues[i] + " is required for " + type);
      e.put((String) keyValues[i], keyValues[i + 1]);
    }
    e.put("timestamp", System.currentTimeMillis());
    return e;
  }
}
