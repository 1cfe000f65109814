// What the package asks IQ-Stream, counted at the server's door: a resume is ONE request (the read itself, which
// tells "in flight", "finished" and "unknown" apart by its answer), not a status lookup then a read; the producer
// writes its frames at once by default and in batches with batchMs, not one HTTP chunk per frame then. The requests are counted by a real HTTP
// proxy in front of the real server (node:http, each request forwarded as it comes, bodies streamed both ways).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createResumableStreamContext } from "@iqstream/resumable-stream";
import { startServer, waitFor } from "./support.js";

/** An HTTP proxy to `targetPort` that records each request ("GET /v1/runs/...") and the body chunks it forwards. */
async function startCountingProxy(targetPort) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const seen = { line: `${req.method} ${decodeURIComponent(req.url)}`, bodyChunks: 0 };
    requests.push(seen);
    const upstream = http.request({ host: "127.0.0.1", port: targetPort, method: req.method, path: req.url,
      headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.on("data", (chunk) => { seen.bodyChunks++; upstream.write(chunk); });
    req.on("end", () => upstream.end());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** The requests recorded from now on. */
    mark() { const from = requests.length; return () => requests.slice(from).map((r) => r.line); },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

const FRAME = (i) => `data: {"type":"text-delta","id":"t","delta":"w${i}"}\n\n`;

/** A source of `n` frames, one every `gapMs`, after a start frame at `firstMs`; [DONE] at the end once `hold` resolves. */
function source(n, { gapMs = 10, hold, firstMs = 0 } = {}) {
  let i = 0;
  return () => new ReadableStream({
    async pull(c) {
      await new Promise((r) => setTimeout(r, i === 0 ? firstMs : gapMs));
      if (i === 0) c.enqueue('data: {"type":"start"}\n\n');
      else if (i <= n) c.enqueue(FRAME(i));
      else {
        await hold;
        c.enqueue("data: [DONE]\n\n");
        c.close();
      }
      i++;
    },
  });
}

async function readAll(stream) {
  let out = "";
  for await (const s of stream) out += s;
  return out;
}

describe("what @iqstream/resumable-stream asks IQ-Stream (counted at a proxy before the real server)", () => {
  let server;
  let proxy;
  let ctx;
  let batched;
  const id = () => `q${Math.random().toString(36).slice(2)}`;
  before(async () => {
    server = await startServer();
    proxy = await startCountingProxy(server.port);
    const token = server.token({ publish: ["resumable-stream:*"], subscribe: ["resumable-stream:*"] });
    ctx = createResumableStreamContext({ waitUntil: null, url: proxy.url, token });
    batched = createResumableStreamContext({ waitUntil: null, url: proxy.url, token, batchMs: 50 });
  });
  after(async () => {
    await proxy?.close();
    await server?.stop();
  });

  test("a resume is one request: of a stream in flight (its text whole), a finished one (null), an unknown one (undefined)", async () => {
    const streamId = id();
    let release;
    const hold = new Promise((r) => { release = r; });
    const own = readAll(await ctx.createNewResumableStream(streamId, source(20, { hold })));
    await new Promise((r) => setTimeout(r, 300));

    let requests = proxy.mark();
    const resumed = await ctx.resumeExistingStream(streamId);
    assert.ok(resumed, "a stream in flight resumes");
    const reader = resumed.getReader();
    const firstChunk = await reader.read();
    assert.match(firstChunk.value, /^data: \{"type":"start"\}/);
    assert.deepEqual(requests(), [`GET /v1/runs/resumable-stream:${streamId}/events?ifRunning=true`],
      "the resume made exactly one request, the read (no status lookup before it)");
    release();
    let text = firstChunk.value;
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
    assert.equal(text, await own, "the resume's text is the producer's, whole");

    await waitFor(async () => await ctx.hasExistingStream(streamId) === "DONE", 10_000, "the stream's end");
    requests = proxy.mark();
    assert.equal(await ctx.resumeExistingStream(streamId), null, "a finished stream: null");
    assert.equal(requests().length, 1, `one request for a finished stream: ${requests()}`);

    requests = proxy.mark();
    assert.equal(await ctx.resumeExistingStream(id()), undefined, "an unknown stream: undefined");
    assert.equal(requests().length, 1, `one request for an unknown stream: ${requests()}`);
  });

  test("resumableStream on a stream in flight is one request too; on an unknown one the read, then the publish", async () => {
    const streamId = id();
    let release;
    const hold = new Promise((r) => { release = r; });
    let requests = proxy.mark();
    const first = readAll(await ctx.resumableStream(streamId, source(5, { hold })));
    const made = requests();
    assert.equal(made[0], `GET /v1/runs/resumable-stream:${streamId}/events?ifRunning=true`, made.join("; "));
    assert.ok(made.includes(`POST /v1/runs/resumable-stream:${streamId}/events`), made.join("; "));
    await new Promise((r) => setTimeout(r, 200));
    requests = proxy.mark();
    const second = await ctx.resumableStream(streamId, () => assert.fail("makeStream is not called for a stream in flight"));
    assert.deepEqual(requests(), [`GET /v1/runs/resumable-stream:${streamId}/events?ifRunning=true`]);
    release();
    assert.equal(await readAll(second), await first);
  });

  test("createNewResumableStream waits for the run with a status request or two, however late the first token", async () => {
    const streamId = id();
    const requests = proxy.mark();
    const started = performance.now();
    // a model's first token a second after the call: the POST's head goes at once all the same (its body opens
    // with an SSE comment), so the run exists before any token and the wait for it is not a poll for a second
    const own = readAll(await ctx.createNewResumableStream(streamId, source(3, { firstMs: 1000 })));
    const waited = performance.now() - started;
    const statuses = requests().filter((line) => line === `GET /v1/runs/resumable-stream:${streamId}`);
    assert.ok(statuses.length >= 1 && statuses.length <= 2, `${statuses.length} status requests: ${requests().join("; ")}`);
    assert.ok(waited < 900, `resolved ${waited.toFixed(0)} ms after the call, before the first token`);
    assert.match(await own, /^data: \{"type":"start"\}/, "the producer's own stream starts with its first frame");
  });

  for (const [name, context, bound] of [["by default each frame at once", () => ctx, (n) => n >= 40],
    ["with batchMs 50 in batches: fewer body chunks than frames", () => batched, (n) => n <= 20]]) {
    test(`the producer writes its frames ${name}, all of them delivered`, async () => {
      const streamId = id();
      const frames = 40;
      const requests = proxy.mark();
      const text = await readAll(await context().createNewResumableStream(streamId, source(frames, { gapMs: 10 })));
      await waitFor(async () => await ctx.hasExistingStream(streamId) === "DONE", 10_000, "the stream's end");
      const post = proxy.requests.find((r) => r.line === `POST /v1/runs/resumable-stream:${streamId}/events`);
      assert.ok(post, requests().join("; "));
      // 42 frames 10 ms apart: one chunk per frame at once (the default), about 9 batches of 50 ms with batchMs
      assert.ok(bound(post.bodyChunks), `${post.bodyChunks} body chunks for ${frames + 2} frames`);
      const replay = createResumableStreamContext({ waitUntil: null, url: proxy.url, replayFinished: true,
        token: server.token({ subscribe: ["resumable-stream:*"] }) });
      assert.equal(await readAll(await replay.resumeExistingStream(streamId)), text, "every frame is in the run");
    });
  }
});
