// A scripted TanStack AI text adapter (the model; no provider is reachable from a test) and a server tool.
// Turn 1 calls the tool `lookup`; turn 2 answers in 48 words, pausing before word HOLD_AT while `control.hold`
// (a promise) is set. chat() itself runs the tool loop, so the stream has what a real tool-using run has:
// RUN_STARTED, TOOL_CALL_*, an intermediate RUN_FINISHED (finish reason tool_calls), TOOL_CALL_RESULT, text,
// RUN_FINISHED.
import { toolDefinition } from "@tanstack/ai";

// 48 words: TanStack appends in batches of 32 chunks (and at boundaries), so a hold at word 40 comes after the
// first text batch reached the reader: the answer is cut in its middle.
export const WORDS = Array.from({ length: 48 }, (_, i) => `w${i}${i % 7 === 6 ? "." : ""} `);
export const HOLD_AT = 40;

export function scriptedModel(control = {}) {
  let calls = 0;
  return {
    kind: "text",
    name: "scripted",
    model: "scripted-1",
    async *chatStream(options) {
      calls++;
      const runId = options.runId ?? "run";
      const threadId = options.threadId ?? "thread";
      const now = () => Date.now();
      const toolTurn = !options.messages.some((m) => m.role === "tool");
      yield { type: "RUN_STARTED", runId, threadId, timestamp: now() };
      if (toolTurn) {
        const toolCallId = `tc-${runId}`;
        yield { type: "TOOL_CALL_START", toolCallId, toolCallName: "lookup", toolName: "lookup", timestamp: now() };
        yield { type: "TOOL_CALL_ARGS", toolCallId, delta: "{\"query\":\"Q3 report\"}", timestamp: now() };
        yield { type: "TOOL_CALL_END", toolCallId, timestamp: now() };
        yield { type: "RUN_FINISHED", runId, threadId, finishReason: "tool_calls", timestamp: now() };
        return;
      }
      const messageId = `m-${runId}-${calls}`;
      yield { type: "TEXT_MESSAGE_START", messageId, role: "assistant", timestamp: now() };
      for (let i = 0; i < WORDS.length; i++) {
        if (i === HOLD_AT && control.hold) await control.hold;
        else await new Promise((r) => setTimeout(r, 2));
        yield { type: "TEXT_MESSAGE_CONTENT", messageId, delta: WORDS[i], timestamp: now() };
      }
      yield { type: "TEXT_MESSAGE_END", messageId, timestamp: now() };
      yield { type: "RUN_FINISHED", runId, threadId, finishReason: "stop", timestamp: now() };
    },
  };
}

export const lookup = toolDefinition({ name: "lookup", description: "Finds a document" })
  .server(async ({ query } = {}) => ({ found: "q3.pdf", query }));
