// TanStack AI through @durable-streams/tanstack-ai-transport 0.0.9, wired as its README's "recommended chat session
// flow": POST /api/chat returns toDurableChatSessionResponse({ stream: { writeUrl, headers }, newMessages,
// responseStream }) with responseStream = @tanstack/ai's chat({ adapter, messages }); GET /api/chat-stream is the
// read proxy that builds the upstream read URL from the chat id, forwards offset / live and adds the read auth
// header; the page loader materializes a snapshot (materializeSnapshotFromDurableStream) and the browser's
// @tanstack/ai-client ChatClient subscribes through durableStreamConnection({ sendUrl, readUrl, initialOffset }).
// What differs from the README: the durable streams server's URL (an IQ-Stream node) and a token (publish and
// subscribe JWTs for the chat's stream path, kept on the server). A reload mid-answer resumes through the other app
// instance on the other IQ-Stream node, from the snapshot's offset.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { chat } from "@tanstack/ai";
import { ChatClient } from "@tanstack/ai-client";
import { durableStreamConnection, ensureDurableChatSessionStream, materializeSnapshotFromDurableStream, toDurableChatSessionResponse } from "@durable-streams/tanstack-ai-transport";
import { HOLD_AT, WORDS, modelHold, recordFetches, serveApp } from "./app.js";
import { startTarget, waitFor } from "./support.js";

let target;
const apps = [];
let hold;

/** A scripted TanStack AI text adapter (no provider is reachable from a test): WORDS, held before HOLD_AT. */
const scriptedAdapter = {
  kind: "text",
  name: "scripted",
  model: "scripted-1",
  async *chatStream(options) {
    const runId = options.runId ?? `run-${randomBytes(3).toString("hex")}`;
    const threadId = options.threadId ?? "thread";
    const messageId = `m-${runId}`;
    yield { type: "RUN_STARTED", runId, threadId, timestamp: Date.now() };
    yield { type: "TEXT_MESSAGE_START", messageId, role: "assistant", timestamp: Date.now() };
    for (let i = 0; i < WORDS.length; i++) {
      if (i === HOLD_AT && hold) { hold.reached(); await hold.held; }
      yield { type: "TEXT_MESSAGE_CONTENT", messageId, delta: WORDS[i], timestamp: Date.now() };
    }
    yield { type: "TEXT_MESSAGE_END", messageId, timestamp: Date.now() };
    yield { type: "RUN_FINISHED", runId, threadId, finishReason: "stop", timestamp: Date.now() };
  },
};

/** The README's routes and page loader, for an app instance whose durable streams server is IQ-Stream node `node`. */
function app(node) {
  const streamPath = (id) => `chats/${id}`;
  const writeUrl = (id) => target.streamUrl(node, streamPath(id));
  const writeHeaders = (id) => ({ Authorization: `Bearer ${target.token({ publish: [streamPath(id)], subscribe: [streamPath(id)] })}` });
  const readHeaders = (id) => ({ Authorization: `Bearer ${target.token({ subscribe: [streamPath(id)] })}` });
  const routes = async (request) => {
    const url = new URL(request.url);
    const id = url.searchParams.get("id");
    if (!id || !/^[\w-]+$/.test(id)) return Response.json({ error: "a chat id is required" }, { status: 400 });
    if (request.method === "POST" && url.pathname === "/api/chat") {
      const { messages } = await request.json();
      const latestUserMessage = messages.at(-1);
      return toDurableChatSessionResponse({
        stream: { writeUrl: writeUrl(id), headers: writeHeaders(id) },
        newMessages: [latestUserMessage],
        responseStream: chat({ adapter: scriptedAdapter, messages }),
      });
    }
    if (request.method === "GET" && url.pathname === "/api/chat-stream") {
      const upstream = new URL(writeUrl(id));
      for (const [k, v] of url.searchParams) if (k !== "id") upstream.searchParams.set(k, v);
      const response = await fetch(upstream, { headers: readHeaders(id), signal: request.signal });
      return new Response(response.body, { status: response.status, headers: response.headers });
    }
    return new Response("not found", { status: 404 });
  };
  /** The chat page's loader (SSR): the chat's stream made sure of, the messages so far and the offset to resume from. */
  const loadChat = async (id) => {
    await ensureDurableChatSessionStream({ writeUrl: writeUrl(id), headers: writeHeaders(id) });
    return materializeSnapshotFromDurableStream({ readUrl: writeUrl(id), headers: readHeaders(id) });
  };
  return { routes, loadChat };
}

const text = (message) => message?.parts.filter((p) => p.type === "text").map((p) => p.content).join("") ?? "";
const answer = (client) => {
  const last = client.getMessages().at(-1);
  return last?.role === "assistant" ? text(last) : "";
};

function page(appUrl, id, { initialOffset, initialMessages } = {}) {
  const connection = durableStreamConnection({
    sendUrl: `${appUrl}/api/chat?id=${id}`,
    readUrl: `${appUrl}/api/chat-stream?id=${encodeURIComponent(id)}`,
    initialOffset,
  });
  const client = new ChatClient({ id, connection, ...(initialMessages ? { initialMessages } : {}) });
  client.subscribe(); // useChat({ id, connection, live: true })
  return client;
}

const instances = [];
before(async () => {
  target = await startTarget();
  instances.push(app(0), app(1));
  apps.push(await serveApp(instances[0].routes), await serveApp(instances[1].routes));
});
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await target?.stop();
});

test("ChatClient with durableStreamConnection: the prompt's echo and the answer arrive through IQ-Stream", async () => {
  hold = null;
  const id = `chat-${randomBytes(4).toString("hex")}`;
  const loaded = await instances[0].loadChat(id);
  assert.deepEqual(loaded.messages, [], "a new chat");
  const client = page(apps[0].url, id, { initialOffset: loaded.offset });
  try {
    await client.sendMessage("hello");
    await waitFor(() => answer(client) === WORDS.join(""), "the whole answer");
    assert.deepEqual(client.getMessages().map((m) => m.role), ["user", "assistant"]);
    assert.equal(text(client.getMessages()[0]), "hello");
  } finally {
    client.unsubscribe();
  }
});

test("a reload mid-answer resumes through the other app instance on the other IQ-Stream node, from the snapshot's offset", async () => {
  hold = modelHold();
  const id = `chat-${randomBytes(4).toString("hex")}`;
  const first = page(apps[0].url, id, { initialOffset: (await instances[0].loadChat(id)).offset });
  const sending = first.sendMessage("tell me");
  await hold.atHold;
  await waitFor(() => answer(first).length > 0, "the first words to reach the first page");
  const before = answer(first);
  assert.ok(WORDS.join("").startsWith(before) && before.length < WORDS.join("").length, `mid-answer: "${before}"`);
  first.unsubscribe(); // the page goes away
  await sending.catch(() => {});
  const fetches = recordFetches();
  try {
    // the reloaded page is served by the other instance: its loader reads the other node
    const snapshot = await instances[1].loadChat(id);
    assert.equal(typeof snapshot.offset, "string");
    assert.deepEqual(snapshot.messages.map((m) => m.role), ["user", "assistant"]);
    assert.ok(text(snapshot.messages[1]).startsWith(before), "the snapshot holds what the first page had");
    const reloaded = page(apps[1].url, id, { initialOffset: snapshot.offset, initialMessages: snapshot.messages });
    try {
      await new Promise((r) => setTimeout(r, 200));
      hold.release();
      await waitFor(() => answer(reloaded) === WORDS.join(""), "the resumed answer to finish", 20_000)
        .catch((err) => { throw new Error(`${err.message}; it has "${answer(reloaded)}"`); });
      assert.deepEqual(reloaded.getMessages().map((m) => m.role), ["user", "assistant"], "no message twice");
      const upstream = fetches.urls.filter((f) => f.method === "GET" && f.url.includes("/v1/stream/")); // the first instance's writer still POSTs
      assert.ok(upstream.length > 0 && upstream.every((f) => f.url.startsWith(`${target.nodes[1]}/v1/stream/chats/${id}`)),
        `after the reload only the other node was read: ${JSON.stringify(upstream.map((f) => f.url))}`);
    } finally {
      reloaded.unsubscribe();
    }
  } finally {
    fetches.restore();
  }
});
