// The AI SDK docs' resumable chat ("Chatbot Resume Streams"): the POST route (app/api/chat/route.ts) and the
// GET route (app/api/chat/[id]/stream/route.ts), on IQ-Stream. The one changed line is the import of
// createResumableStreamContext; IQSTREAM_URL and IQSTREAM_TOKEN take the place of REDIS_URL.
// Beside the docs: ai 7's standalone helpers (toUIMessageStream, createUIMessageStreamResponse) in place of the
// deprecated result.toUIMessageStreamResponse, and the model, the chat store and `after` come from files of this
// folder (a Next.js app has them from @ai-sdk/openai, @util/chat-store and next/server).
import { readChat, saveChat } from './chat-store.js';
import { model } from './model.js';
import { after } from './after.js';
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  generateId,
  streamText,
  toUIMessageStream,
  UI_MESSAGE_STREAM_HEADERS,
} from 'ai';
import { createResumableStreamContext } from '@iqstream/resumable-stream';

export async function POST(req) {
  const { message, id } = await req.json();

  const chat = await readChat(id);
  let messages = chat.messages;

  messages = [...messages, message];

  // Clear any previous active stream and save the user message
  saveChat({ id, messages, activeStreamId: null });

  const result = streamText({
    model,
    messages: await convertToModelMessages(messages),
  });

  return createUIMessageStreamResponse({
    stream: toUIMessageStream({
      stream: result.stream,
      originalMessages: messages,
      generateMessageId: generateId,
      onFinish: ({ messages }) => {
        // Clear the active stream when finished
        saveChat({ id, messages, activeStreamId: null });
      },
    }),
    async consumeSseStream({ stream }) {
      const streamId = generateId();

      // Create a resumable stream from the SSE stream
      const streamContext = createResumableStreamContext({ waitUntil: after });
      await streamContext.createNewResumableStream(streamId, () => stream);

      // Update the chat with the active stream ID
      saveChat({ id, activeStreamId: streamId });
    },
  });
}

export async function GET(_, { params }) {
  const { id } = await params;

  const chat = await readChat(id);

  if (chat.activeStreamId == null) {
    // no content response when there is no active stream
    return new Response(null, { status: 204 });
  }

  const streamContext = createResumableStreamContext({
    waitUntil: after,
  });

  return new Response(
    await streamContext.resumeExistingStream(chat.activeStreamId),
    { headers: UI_MESSAGE_STREAM_HEADERS },
  );
}
