// The workload's run (docs/WORKLOAD.md) as the AI SDK's UI message chunks: start, a 180-token answer, a tool
// call (40 tool-input-delta fragments, tool-input-available, the 1.5 s tool, an 8 KiB tool-output-available),
// a 200-token answer, finish: 429 chunks, as the AI SDK's toUIMessageStream shapes a model's stream.
import { randomUUID } from "node:crypto";

const WORDS = ["the", "report", "for", "Q3", "shows", "revenue", "growth", "across", "all", "regions", "with",
  "strong", "margins", "and", "steady", "customer", "retention"];

function token(i) {
  const w = WORDS[i % WORDS.length];
  return (i === 0 ? "" : " ") + w.slice(0, 2 + (i % 7));
}

export function runChunks(chatId) {
  const out = [];
  const text1 = randomUUID();
  const text2 = randomUUID();
  const call = `call_${randomUUID()}`;
  out.push({ type: "start", messageId: randomUUID() }, { type: "start-step" }, { type: "text-start", id: text1 });
  for (let i = 0; i < 180; i++) out.push({ type: "text-delta", id: text1, delta: token(i) });
  out.push({ type: "text-end", id: text1 });
  out.push({ type: "tool-input-start", toolCallId: call, toolName: "search_reports" });
  const args = JSON.stringify({ query: `quarterly report ${chatId}`, filters: { year: 2026, quarter: 3 },
    fields: ["revenue", "margin", "region", "retention"], limit: 25, sort: "relevance", explain: true });
  for (let i = 0; i < 40; i++) {
    const from = Math.floor((i * args.length) / 40);
    const to = Math.floor(((i + 1) * args.length) / 40);
    out.push({ type: "tool-input-delta", toolCallId: call, inputTextDelta: args.slice(from, to) });
  }
  out.push({ type: "tool-input-available", toolCallId: call, toolName: "search_reports", input: JSON.parse(args) });
  out.push({ type: "tool-output-available", toolCallId: call, output: { content: "x".repeat(8192) } });
  out.push({ type: "finish-step" }, { type: "start-step" });
  out.push({ type: "text-start", id: text2 });
  for (let i = 0; i < 200; i++) out.push({ type: "text-delta", id: text2, delta: token(i + 3) });
  out.push({ type: "text-end", id: text2 });
  out.push({ type: "finish-step" }, { type: "finish", finishReason: "stop" });
  return out;
}

/** Chunks per run, and the text deltas among them (the tokens). */
export const CHUNKS = runChunks("x").length;
export const TOKENS = runChunks("x").filter((c) => c.type === "text-delta").length;
