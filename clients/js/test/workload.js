// A WORKLOAD.md-style AG-UI run: every event valid for @ag-ui/core 1.0 (integer epoch-ms
// timestamps, optional fields left out), ids are UUIDs as real frameworks make them.
import { randomUUID } from "node:crypto";

const WORDS = ["the", "relay", "keeps", "every", "token", "in", "memory", "so", "a", "browser",
  "resumes", "where", "it", "left", "off", "without", "loss", "or", "repeat", "stream"];

/**
 * @param {object} [shape]
 * @returns {Array<Record<string, unknown>>}
 */
export function workloadRun({
  threadId = randomUUID(),
  runId = randomUUID(),
  firstAnswerTokens = 180,
  toolArgFragments = 40,
  toolResultBytes = 8192,
  secondAnswerTokens = 200,
} = {}) {
  const now = () => Date.now();
  const events = [];
  events.push({ type: "RUN_STARTED", threadId, runId, timestamp: now() });
  const answer = (count, salt) => {
    const messageId = randomUUID();
    events.push({ type: "TEXT_MESSAGE_START", messageId, role: "assistant", timestamp: now() });
    for (let i = 0; i < count; i++) {
      const word = WORDS[(i * 7 + salt) % WORDS.length];
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: (i === 0 ? "" : " ") + word + (i % 17 === 16 ? "." : ""), timestamp: now() });
    }
    events.push({ type: "TEXT_MESSAGE_END", messageId, timestamp: now() });
    return messageId;
  };
  const firstMessageId = answer(firstAnswerTokens, 1);
  if (toolArgFragments > 0) {
    const toolCallId = randomUUID();
    events.push({ type: "TOOL_CALL_START", toolCallId, toolCallName: "search_documents", parentMessageId: firstMessageId, timestamp: now() });
    const args = JSON.stringify({ query: "resumable streams for AI agents ünïcödé ✓", limit: 5, filters: { lang: "en", since: "2025-01-01" } });
    const size = Math.ceil(args.length / toolArgFragments);
    for (let i = 0; i < toolArgFragments; i++) {
      const delta = args.slice(i * size, (i + 1) * size);
      events.push({ type: "TOOL_CALL_ARGS", toolCallId, delta, timestamp: now() });
    }
    events.push({ type: "TOOL_CALL_END", toolCallId, timestamp: now() });
    let content = "";
    while (content.length < toolResultBytes) content += "result line: documents about relays and resumes\n";
    events.push({ type: "TOOL_CALL_RESULT", messageId: randomUUID(), toolCallId, role: "tool", content: content.slice(0, toolResultBytes), timestamp: now() });
  }
  if (secondAnswerTokens > 0) answer(secondAnswerTokens, 3);
  events.push({ type: "RUN_FINISHED", threadId, runId, timestamp: now() });
  return events;
}

/**
 * The assistant texts of a run, message by message.
 * @param {Array<Record<string, any>>} events
 */
export function assistantTexts(events) {
  const texts = new Map();
  for (const e of events) {
    if (e.type === "TEXT_MESSAGE_START") texts.set(e.messageId, "");
    if (e.type === "TEXT_MESSAGE_CONTENT") texts.set(e.messageId, texts.get(e.messageId) + e.delta);
  }
  return [...texts.values()];
}
