// The AI SDK docs' resumable chat on two app instances (separate processes, one shared chat store), driven by
// the AI SDK's own DefaultChatTransport and readUIMessageStream: once on IQ-Stream (@iqstream/resumable-stream),
// once on the original resumable-stream with a local Redis. Where the two differ (a dead producer, stop), the
// test says which behaviour each has: that difference is the point of the package.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import {
  chatStore, expectedText, fold, readChat, readThenCut, startApp, startRedis, startServer, transport, userMessage,
  waitFor,
} from "./support.js";

const TOKENS = 40;
/** The package's default batchMs (src/index.js): 0, each frame written at once. */
const DEFAULT_BATCH_MS = 0;
const MOCK = { MOCK_TOKENS: String(TOKENS), MOCK_DELAY_MS: "50" };
const REDIS_BIN = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";
/** The publisher lease the package sends when the app names none (src: publisherLeaseMs). */
const DEFAULT_LEASE_MS = 2000;

const backends = [{ name: "iqstream" }];
if (existsSync(REDIS_BIN)) backends.push({ name: "redis" });
else console.log(`# SKIPPED the original resumable-stream + Redis runs: no redis-server at ${REDIS_BIN}`);

for (const backend of backends) {
  const iq = backend.name === "iqstream";
  describe(`the docs' resumable chat on two instances (${iq ? "@iqstream/resumable-stream" : "resumable-stream + Redis"})`,
    () => {
      let store;
      let env;
      let server;
      let redis;
      let a;
      let b;
      before(async () => {
        store = chatStore();
        if (iq) {
          server = await startServer();
          const token = server.token({ publish: ["resumable-stream:*"], subscribe: ["resumable-stream:*"] });
          env = { RESUMABLE: "iqstream", IQSTREAM_URL: server.baseUrl, IQSTREAM_TOKEN: token };
        } else {
          redis = await startRedis();
          env = { RESUMABLE: "redis", REDIS_URL: redis.url };
        }
        env = { ...env, ...MOCK, CHAT_STORE: store };
        [a, b] = await Promise.all([startApp(env), startApp(env)]);
      });
      after(async () => {
        await Promise.all([a?.kill(), b?.kill()]);
        await server?.stop();
        await redis?.stop();
      });

      /** Sends a message on `app` and cuts the request after `deltas` text deltas; returns the chat id. */
      async function sendAndCut(app, deltas = 5) {
        const chatId = `chat-${Math.random().toString(36).slice(2)}`;
        const abort = new AbortController();
        const stream = await transport(app).sendMessages({
          trigger: "submit-message", chatId, messageId: undefined, messages: [userMessage("hi")],
          abortSignal: abort.signal,
        });
        const seen = await readThenCut(stream, abort, "text-delta", deltas);
        assert.equal(seen[0].type, "start");
        await waitFor(() => readChat(store, chatId)?.activeStreamId, 5000, "activeStreamId saved");
        return chatId;
      }

      test("a cut on A, reconnectToStream on B folds into exactly the uncut answer, each token once", async () => {
        const chatId = await sendAndCut(a);
        const stream = await transport(b).reconnectToStream({ chatId });
        assert.ok(stream, "B resumes the stream (not 204)");
        const { text, chunks } = await fold(stream);
        assert.equal(text, expectedText(TOKENS));
        assert.equal(chunks[0].type, "start", "the resume replays from the first chunk");
        assert.equal(chunks.filter((c) => c.type === "text-delta").length, TOKENS);
        assert.equal(chunks.at(-1).type, "finish");
        // the producer's onFinish saved the whole answer and cleared the active stream
        await waitFor(() => readChat(store, chatId)?.activeStreamId === null, 10_000, "activeStreamId cleared");
        const saved = readChat(store, chatId).messages.at(-1);
        assert.equal(saved.parts.filter((p) => p.type === "text").map((p) => p.text).join(""), expectedText(TOKENS));
      });

      test("two readers at once, on both instances, each get the whole answer", async () => {
        const chatId = await sendAndCut(a, 3);
        const [s1, s2] = await Promise.all([
          transport(b).reconnectToStream({ chatId }), transport(a).reconnectToStream({ chatId })]);
        const [r1, r2] = await Promise.all([fold(s1), fold(s2)]);
        assert.equal(r1.text, expectedText(TOKENS));
        assert.equal(r2.text, expectedText(TOKENS));
      });

      test("204 with no active stream: an unknown chat, and a chat whose answer finished", async () => {
        assert.equal(await transport(b).reconnectToStream({ chatId: "no-such-chat" }), null);
        const chatId = await sendAndCut(a, 2);
        await waitFor(() => readChat(store, chatId)?.activeStreamId === null, 10_000, "the answer finished");
        assert.equal(await transport(b).reconnectToStream({ chatId }), null);
      });

      test(iq ? "the producing instance SIGKILLed mid-answer: the resume on B ends within the lease (2 s) × 1.5 + 1 s with an error chunk"
        : "the producing instance SIGKILLed mid-answer: resumable-stream's resume fails (Timeout waiting for ack)",
      async () => {
        const victim = await startApp(env);
        const chatId = await sendAndCut(victim, 5);
        await victim.kill("SIGKILL");
        const t0 = Date.now();
        if (iq) {
          const stream = await transport(b).reconnectToStream({ chatId });
          assert.ok(stream);
          const chunks = [];
          const reader = stream.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            chunks.push(value);
          }
          const ms = Date.now() - t0;
          // AI-SDK.md: readers get the error chunk within the lease (the package's default, 2 s); room for a loaded
          // machine, but a lease applied four times late fails
          const boundMs = DEFAULT_LEASE_MS * 1.5 + 1000;
          console.log(`PUBLISHER_LOST reached the resume on B ${ms} ms after the SIGKILL (lease ${DEFAULT_LEASE_MS} ms, bound ${boundMs} ms)`);
          assert.ok(ms <= boundMs, `ended ${ms} ms after the SIGKILL, past the ${DEFAULT_LEASE_MS} ms lease × 1.5 + 1 s`);
          assert.equal(chunks[0].type, "start");
          const end = chunks.at(-1);
          assert.equal(end.type, "error");
          assert.match(end.errorText, /PUBLISHER_LOST/);
          const text = chunks.filter((c) => c.type === "text-delta").map((c) => c.delta).join("");
          // what the browser had, less at most the tokens of the producer's last batch (batchMs, 50 ms: one token
          // of the model's 50 ms) that the SIGKILL took before they were written to IQ-Stream
          const lostAtMost = Math.ceil(DEFAULT_BATCH_MS / Number(MOCK.MOCK_DELAY_MS));
          assert.ok(text.length >= "token-1 ".length * (5 - lostAtMost) && expectedText(TOKENS).startsWith(text), text);
        } else {
          // the chunks lived in the killed process: nothing answers B's request for them
          await assert.rejects(transport(b).reconnectToStream({ chatId }), /Timeout waiting for ack|500/);
          assert.ok(Date.now() - t0 < 10_000);
        }
      });

      test(iq ? "stop from B: B's reader ends with abort, the producer's model on A stops"
        : "stop from B: resumable-stream cannot stop a stream (the app's stop route answers 501)", async () => {
        const producer = await startApp(env);
        try {
          const chatId = await sendAndCut(producer, 5);
          const stream = await transport(b).reconnectToStream({ chatId });
          const reading = fold(stream).catch((e) => ({ error: e }));
          const stop = await fetch(`${b.url}/api/chat/${chatId}/stream`, { method: "DELETE" });
          if (!iq) {
            assert.equal(stop.status, 501);
            const r = await reading;
            assert.equal(r.text, expectedText(TOKENS), "the answer runs to its end");
            return;
          }
          assert.equal(stop.status, 200);
          assert.deepEqual(await stop.json(), { stopped: true });
          const { chunks, text } = await reading;
          assert.equal(chunks.at(-1).type, "abort");
          assert.ok(text.length < expectedText(TOKENS).length, "stopped before the end");
          // the producer's source was cancelled: the model is read no further (the tee's other branch, A's own
          // response, went with A's cut), so it stops generating though its process lives on; with
          // resumable-stream (above) the same answer runs to its end
          const model = async () => (await (await fetch(`${producer.url}/debug/model`)).json()).emitted;
          // (streams between the model and the tee hold a few chunks read ahead: it settles, then stays)
          let last = await model();
          let later;
          await waitFor(async () => {
            await new Promise((r) => setTimeout(r, 500));
            later = await model();
            const settled = later === last;
            last = later;
            return settled;
          }, 8000, "the model settled");
          assert.ok(later < TOKENS, `the model stopped at ${later} of ${TOKENS}`);
        } finally {
          await producer.kill();
        }
      });
    });
}
