// createResumableStreamContext's own conventions, called directly, on IQ-Stream and on the original with Redis:
// hasExistingStream null/true/"DONE", resumeExistingStream undefined/stream/null, skipCharacters, and the text
// handed back exactly as the producer wrote it — also when the producer's strings split SSE frames anywhere.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { startRedis, startServer } from "./support.js";

const REDIS_BIN = process.env.REDIS_SERVER ?? "/usr/bin/redis-server";
const FRAMES = [
  'data: {"type":"start","messageId":"m1"}\n\n',
  'data: {"type":"text-start","id":"t"}\n\n',
  'data: {"type":"text-delta","id":"t","delta":"h\u00e9llo \ud83d\ude00 \\"quoted\\" \\ud83d"}\n\n',
  'data: {"type":"text-end","id":"t"}\n\n',
  'data: {"type":"finish"}\n\n',
  "data: [DONE]\n\n",
];
const TEXT = FRAMES.join("");

/** A makeStream source that yields `pieces`, each after `gapMs`, and waits for `release` before its last. */
function source(pieces, { gapMs = 5, hold } = {}) {
  let i = 0;
  return () => new ReadableStream({
    async pull(c) {
      if (i === pieces.length - 1 && hold) await hold;
      await new Promise((r) => setTimeout(r, gapMs));
      if (i < pieces.length) c.enqueue(pieces[i++]);
      else c.close();
    },
  });
}

async function readAll(stream) {
  let out = "";
  for await (const s of stream) out += s;
  return out;
}

const backends = ["iqstream"];
if (existsSync(REDIS_BIN)) backends.push("redis");

for (const backend of backends) {
  const iq = backend === "iqstream";
  describe(`createResumableStreamContext (${iq ? "@iqstream/resumable-stream" : "resumable-stream + Redis"})`, () => {
    let server;
    let redis;
    let create;
    let clients = [];
    before(async () => {
      if (iq) {
        server = await startServer();
        process.env.IQSTREAM_URL = server.baseUrl;
        process.env.IQSTREAM_TOKEN = server.token({ publish: ["resumable-stream:*"], subscribe: ["resumable-stream:*"] });
        ({ createResumableStreamContext: create } = await import("@iqstream/resumable-stream"));
      } else {
        redis = await startRedis();
        process.env.REDIS_URL = redis.url;
        // the test's own clients (as resumable-stream's docs allow), so they are closed before Redis stops
        const { createClient } = await import("redis");
        clients = [createClient({ url: redis.url }), createClient({ url: redis.url })];
        await Promise.all(clients.map((c) => c.connect()));
        const { createResumableStreamContext: original } = await import("resumable-stream");
        create = (options) => original({ ...options, subscriber: clients[0], publisher: clients[1] });
      }
    });
    after(async () => {
      await server?.stop();
      await Promise.all(clients.map((c) => c.quit().catch(() => {})));
      await redis?.stop();
    });
    const id = () => `s${Math.random().toString(36).slice(2)}`;

    test("unknown: hasExistingStream null, resumeExistingStream undefined", async () => {
      const ctx = create({ waitUntil: null });
      assert.equal(await ctx.hasExistingStream("nope"), null);
      assert.equal(await ctx.resumeExistingStream("nope"), undefined);
    });

    test("live: true, a resume from any point gets the producer's text exactly; done: DONE and null", async () => {
      const ctx = create({ waitUntil: null });
      const streamId = id();
      let release;
      const hold = new Promise((r) => { release = r; });
      // the producer's strings cut frames at odd places, as a proxy or a tokenizer might
      const pieces = [TEXT.slice(0, 7), TEXT.slice(7, 50), TEXT.slice(50, 61), TEXT.slice(61, -3), TEXT.slice(-3)];
      const called = performance.now();
      const own = await ctx.createNewResumableStream(streamId, source(pieces, { hold }));
      // docs/AI-SDK.md quotes this: how long after the call the stream is held (resumable on any instance)
      console.log(`createNewResumableStream resolved ${Math.round(performance.now() - called)} ms after the call (${backend})`);
      const producer = readAll(own);
      // once createNewResumableStream has resolved the stream is known (the docs save its id right then)
      assert.equal(await ctx.hasExistingStream(streamId), true);
      await new Promise((r) => setTimeout(r, 300));
      const whole = readAll(await ctx.resumeExistingStream(streamId));
      const skipped = [1, 6, 60, 75].map(async (k) => [k, await readAll(await ctx.resumeExistingStream(streamId, k))]);
      await new Promise((r) => setTimeout(r, 100));
      release();
      assert.equal(await producer, TEXT, "the producer's own stream");
      assert.equal(await whole, TEXT);
      for (const [k, text] of await Promise.all(skipped)) assert.equal(text, TEXT.slice(k), `skipCharacters ${k}`);
      // the end reaches the server a moment after the producer's own stream closed
      const deadline = Date.now() + 5000;
      while (await ctx.hasExistingStream(streamId) !== "DONE" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(await ctx.hasExistingStream(streamId), "DONE");
      assert.equal(await ctx.resumeExistingStream(streamId), null);
      assert.equal(await ctx.resumableStream(streamId, source(["x"])), null);
    });

    test("resumableStream creates when unknown, resumes when live", async () => {
      const ctx = create({ waitUntil: null });
      const streamId = id();
      let release;
      const hold = new Promise((r) => { release = r; });
      const first = await ctx.resumableStream(streamId, source(FRAMES, { hold }));
      await new Promise((r) => setTimeout(r, 300));
      let made = false;
      const second = await ctx.resumableStream(streamId, () => { made = true; return source(["never"])(); });
      release();
      assert.equal(await readAll(first), TEXT);
      assert.equal(await readAll(second), TEXT);
      assert.equal(made, false, "makeStream is not called for a stream in progress");
    });

    if (iq) {
      test("a frame it could not replay byte for byte (event:, id:, two data: lines, CR, no space) is refused, naming it", async () => {
        const ctx = create({ waitUntil: null, onError: () => {} });
        // each frame, and what the error must name of it
        const bad = [['event: note\ndata: {"type":"x"}\n\n', "event: note"], ['id: 7\ndata: {"type":"x"}\n\n', "id: 7"],
          ['data: {"type":\ndata: "x"}\n\n', 'data: \\"x\\"'], [': ping\ndata: {"type":"x"}\n\n', ": ping"],
          ['data: {"type":"x"}\r\n\r\n', "\\r\\n"], ['data:{"type":"x"}\n\n', "data:{"]];
        for (const [frame, named] of bad) {
          // split inside the frame too: the check sees frames, not the producer's strings
          const pieces = [FRAMES[0], frame.slice(0, 3), frame.slice(3), FRAMES[4], FRAMES[5]];
          const own = await ctx.createNewResumableStream(id(), source(pieces));
          await assert.rejects(readAll(own), (e) => e instanceof TypeError && /cannot replay exactly/.test(e.message)
            && e.message.includes(named), JSON.stringify(frame));
        }
        // single-line frames pass, cut anywhere; a frame of comments only (a keep-alive ping) passes and is not replayed
        const streamId = id();
        const withPing = `${FRAMES[0]}: ping\n\n${FRAMES.slice(1).join("")}`;
        assert.equal(await readAll(await ctx.createNewResumableStream(streamId, source([withPing.slice(0, 9),
          withPing.slice(9, 47), withPing.slice(47)]))), withPing, "the producer's own stream: as written");
        const deadline = Date.now() + 5000;
        while (await ctx.hasExistingStream(streamId) !== "DONE" && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
        }
        const replay = create({ waitUntil: null, replayFinished: true });
        assert.equal(await readAll(await replay.resumeExistingStream(streamId)), TEXT, "the replay: every data frame, exactly");
      });

      test("beyond the original: replayFinished replays a finished stream (resumable-stream #44)", async () => {
        const ctx = create({ waitUntil: null, replayFinished: true });
        const streamId = id();
        assert.equal(await readAll(await ctx.createNewResumableStream(streamId, source(FRAMES))), TEXT);
        const deadline = Date.now() + 5000;
        while (await ctx.hasExistingStream(streamId) !== "DONE" && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.equal(await readAll(await ctx.resumeExistingStream(streamId)), TEXT);
        assert.equal(await readAll(await ctx.resumeExistingStream(streamId, 10)), TEXT.slice(10));
      });

      test("the address and token default to IQSTREAM_URL and IQSTREAM_TOKEN; a wrong token is an error", async () => {
        const saved = process.env.IQSTREAM_URL;
        delete process.env.IQSTREAM_URL;
        try {
          assert.throws(() => create({ waitUntil: null }), /IQSTREAM_URL/);
        } finally {
          process.env.IQSTREAM_URL = saved;
        }
        const ctx = create({ waitUntil: null, token: "not-a-jwt" });
        await assert.rejects(ctx.hasExistingStream("x"), /401/);
        await assert.rejects(create({ waitUntil: null, keyPrefix: "bad prefix" }).hasExistingStream("x"), /run id/);
      });

      test("stopStream: true for a running stream (its source cancelled), false once it ended", async () => {
        const ctx = create({ waitUntil: null });
        const streamId = id();
        let cancelled;
        const gotCancel = new Promise((r) => { cancelled = r; });
        let n = 0;
        const own = await ctx.createNewResumableStream(streamId, () => new ReadableStream({
          async pull(c) {
            await new Promise((r) => setTimeout(r, 20));
            c.enqueue(n++ === 0 ? FRAMES[0] : 'data: {"type":"text-delta","id":"t","delta":"x"}\n\n');
          },
          cancel(reason) { cancelled(reason); },
        }));
        readAll(own).catch(() => {});
        await new Promise((r) => setTimeout(r, 300));
        const reader = readAll(await ctx.resumeExistingStream(streamId));
        assert.equal(await ctx.stopStream(streamId), true);
        assert.match(String(await gotCancel), /stopped/);
        const text = await reader;
        assert.ok(text.endsWith('data: {"type":"abort","reason":"run stopped (STOPPED)"}\n\ndata: [DONE]\n\n'), text);
        assert.equal(await ctx.stopStream(streamId), false);
      });
    }
  });
}
