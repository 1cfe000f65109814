// Reads an AG-UI endpoint with AG-UI's own TypeScript client, unchanged: HttpAgent.runAgent (what CopilotKit's
// runtime does for a remote agent). Prints one JSON line: the event types it delivered (after its own schema
// validation and verification of the event order), the assistant's text, and the messages it built.
//   node read-endpoint.mjs URL THREAD_ID RUN_ID
import { HttpAgent } from "@ag-ui/client";

const [url, threadId, runId] = process.argv.slice(2);
const agent = new HttpAgent({ url, threadId, initialMessages: [{ id: "u1", role: "user", content: "tell me" }] });
const types = [];
const { newMessages } = await agent.runAgent({ runId }, {
  onEvent({ event }) {
    types.push(event.type);
  },
});
const text = newMessages.filter((m) => m.role === "assistant").map((m) => m.content ?? "").join("");
console.log(JSON.stringify({ types, text, messages: newMessages.length }));
