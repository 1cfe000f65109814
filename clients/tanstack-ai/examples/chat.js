// TanStack AI's chat route with its runs kept in IQ-Stream: resumable across server instances and reloads.
// IQSTREAM_URL: IQ-Stream's address; IQSTREAM_TOKEN: a JWT with publish and subscribe on "tsa.*" (dev mode's PUB).
import { chat, resumeServerSentEventsResponse, toServerSentEventsResponse } from "@tanstack/ai";
import { iqstreamStream } from "@iqstream/tanstack-ai";

/** The handlers of /api/chat (Web Request -> Response) for a text adapter, e.g. `{ adapter: openaiText("gpt-5.5") }`. */
export function chatRoutes({ adapter, tools = [] }) {
  return {
    // useChat / fetchServerSentEvents: a new run, or the same request again with Last-Event-ID to resume it
    async POST(request) {
      const { messages, threadId, runId } = await request.json();
      const stream = chat({ adapter, tools, messages, threadId, runId });
      return toServerSentEventsResponse(stream, { durability: { adapter: iqstreamStream(request) } });
    },
    // joinRun(runId): GET ?offset=-1&runId=..., the run from its start, on any instance
    async GET(request) {
      return resumeServerSentEventsResponse({ adapter: iqstreamStream(request) });
    },
  };
}
