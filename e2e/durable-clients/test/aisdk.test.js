// The AI SDK through @durable-streams/aisdk-transport 0.0.7, wired as its README's "optimal setup: resumable
// generations": the server's POST /api/chat returns toDurableStreamResponse({ source: result.toUIMessageStream(...),
// stream: { writeUrl, readUrl, headers } }) and GET /api/chat/:id/stream answers 204 or { streamUrl }; the browser's
// chat uses createDurableChatTransport({ api }) with resume. What differs from the README: the durable streams
// server's URL (an IQ-Stream node) and a token (the write headers carry a publish JWT for the stream's path; the
// read URL a subscribe JWT in ?access_token=, since the transport's reader sends no headers). The chat is the AI
// SDK's own AbstractChat (what useChat wraps) with a plain state object; the model is the AI SDK's
// MockLanguageModelV3, held mid-answer. A reload mid-answer resumes through the other app instance, on the other
// IQ-Stream node.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { AbstractChat, convertToModelMessages, streamText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { createDurableChatTransport, toDurableStreamResponse } from "@durable-streams/aisdk-transport";
import { HOLD_AT, WORDS, modelHold, recordFetches, serveApp } from "./app.js";
import { startTarget, waitFor } from "./support.js";

let target;
const apps = [];
const chats = new Map(); // the app's database: chat id -> { messages, activeStreamId }
let hold;

/** The AI SDK's mock model streaming WORDS, pausing before HOLD_AT until the test releases it. */
function scriptedModel() {
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: new ReadableStream({
        async start(controller) {
          controller.enqueue({ type: "stream-start", warnings: [] });
          controller.enqueue({ type: "text-start", id: "t1" });
          for (let i = 0; i < WORDS.length; i++) {
            if (i === HOLD_AT && hold) { hold.reached(); await hold.held; }
            controller.enqueue({ type: "text-delta", id: "t1", delta: WORDS[i] });
          }
          controller.enqueue({ type: "text-end", id: "t1" });
          controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" },
            usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: WORDS.length, text: WORDS.length, reasoning: 0 } } });
          controller.close();
        },
      }),
    }),
  });
}

/** The README's routes, for an app instance whose durable streams server is IQ-Stream node `node`. */
function routes(node) {
  const buildWriteStreamUrl = (streamPath) => target.streamUrl(node, streamPath);
  const buildReadUrl = (streamPath) => `${target.streamUrl(node, streamPath)}?access_token=${target.token({ subscribe: [streamPath] })}`;
  const writeHeaders = (streamPath) => ({ Authorization: `Bearer ${target.token({ publish: [streamPath] })}` });
  return async (request) => {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === "/api/chat") {
      const { id, messages } = await request.json();
      const streamPath = `chats/${id}/${randomBytes(6).toString("hex")}`;
      chats.set(id, { messages, activeStreamId: streamPath });
      const result = streamText({ model: scriptedModel(), messages: await convertToModelMessages(messages) });
      return toDurableStreamResponse({
        source: result.toUIMessageStream({
          originalMessages: messages,
          onFinish: ({ messages: finalMessages }) => { chats.set(id, { messages: finalMessages, activeStreamId: null }); },
        }),
        stream: { writeUrl: buildWriteStreamUrl(streamPath), readUrl: buildReadUrl(streamPath), headers: writeHeaders(streamPath) },
      });
    }
    const reconnect = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    if (request.method === "GET" && reconnect) {
      const chat = chats.get(reconnect[1]);
      if (!chat?.activeStreamId) return new Response(null, { status: 204 });
      const streamUrl = buildReadUrl(chat.activeStreamId);
      return Response.json({ streamUrl }, { status: 200, headers: { Location: streamUrl } });
    }
    return new Response("not found", { status: 404 });
  };
}

/** The AI SDK's chat with the plain state a framework binding (useChat's ReactChatState) would keep. */
class Chat extends AbstractChat {
  constructor(init) {
    const state = {
      status: "ready", error: undefined, messages: init.messages ?? [],
      pushMessage(m) { this.messages = [...this.messages, m]; },
      popMessage() { this.messages = this.messages.slice(0, -1); },
      replaceMessage(i, m) { this.messages = this.messages.map((x, j) => (j === i ? m : x)); },
      snapshot: (thing) => structuredClone(thing),
    };
    super({ ...init, state });
  }
}

const text = (message) => message?.parts.filter((p) => p.type === "text").map((p) => p.text).join("") ?? "";

before(async () => {
  target = await startTarget();
  apps.push(await serveApp(routes(0)), await serveApp(routes(1)));
});
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await target?.stop();
});

test("useChat's transport: an answer streams through IQ-Stream, and the reconnect endpoint answers 204 once it is done", async () => {
  hold = null;
  const id = `chat-${randomBytes(4).toString("hex")}`;
  const chat = new Chat({ id, transport: createDurableChatTransport({ api: `${apps[0].url}/api/chat` }) });
  await chat.sendMessage({ text: "hello" });
  await waitFor(() => chat.status === "ready", "the answer to finish");
  assert.equal(chat.error, undefined);
  assert.equal(text(chat.messages.at(-1)), WORDS.join(""));
  await waitFor(() => chats.get(id)?.activeStreamId === null, "onFinish to clear the active stream");
  assert.equal((await fetch(`${apps[1].url}/api/chat/${id}/stream`)).status, 204);
});

test("a reload mid-answer resumes through the other app instance on the other IQ-Stream node: the whole answer, once", async () => {
  hold = modelHold();
  const id = `chat-${randomBytes(4).toString("hex")}`;
  const first = new Chat({ id, transport: createDurableChatTransport({ api: `${apps[0].url}/api/chat` }) });
  const sending = first.sendMessage({ text: "tell me" });
  await hold.atHold;
  const answer = (chat) => (chat.messages.at(-1)?.role === "assistant" ? text(chat.messages.at(-1)) : "");
  await waitFor(() => answer(first).length > 0, "the first words to reach the first page");
  const before = answer(first);
  assert.ok(WORDS.join("").startsWith(before) && before.length < WORDS.join("").length, `mid-answer: "${before}"`);
  // the page reloads: the first chat's request is aborted, a new page with the stored messages resumes
  await first.stop();
  await sending.catch(() => {});
  const fetches = recordFetches();
  try {
    const stored = chats.get(id);
    assert.ok(stored.activeStreamId, "the generation is still active");
    const reloaded = new Chat({ id, messages: stored.messages, transport: createDurableChatTransport({ api: `${apps[1].url}/api/chat` }) });
    const resuming = reloaded.resumeStream(); // what useChat({ resume: true }) calls on mount
    await waitFor(() => answer(reloaded).length >= before.length, "the reloaded page to catch up");
    hold.release();
    await resuming;
    await waitFor(() => reloaded.status === "ready", "the resumed answer to finish");
    assert.equal(reloaded.error, undefined);
    assert.deepEqual(reloaded.messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal(text(reloaded.messages.at(-1)), WORDS.join(""), "every word once, in order");
    const reads = fetches.urls.filter((f) => f.method === "GET" && f.url.includes("/v1/stream/")); // the first instance's writer still POSTs
    assert.ok(reads.length > 0 && reads.every((f) => f.url.startsWith(`${target.nodes[1]}/v1/stream/chats/${id}/`)),
      `the resumed page read from the other node only: ${JSON.stringify(reads.map((f) => f.url.replace(/access_token=[^&]+/, "access_token=…")))}`);
  } finally {
    fetches.restore();
  }
});
