// The bench's app instance: POST /api/chat streams the workload's run as UI message chunks (workload.js, paced
// as the AI SDK would write a model's answer) through the AI SDK's own createUIMessageStreamResponse; the
// copy for resumability goes, by ROW, to @iqstream/resumable-stream (iqstream), the original resumable-stream
// with Redis (redis), or nowhere (none: the app streams straight to the browser). GET /api/chat/:id/stream is
// the docs' resume route. The chat store is in memory, keyed by the chat id the bench sends: the bench makes
// every request for one chat go to the instance that knows it or tells it (activeStreamId in the POST reply's
// header), so the store is not what is measured.
import http from "node:http";
import { createUIMessageStream, createUIMessageStreamResponse, UI_MESSAGE_STREAM_HEADERS } from "ai";
import { runChunks } from "./workload.js";

const ROW = process.env.ROW ?? "iqstream";
// iqstream-base: another copy of the package (BASE_PACKAGE, its src/index.js), to compare two builds in one run
const { createResumableStreamContext } = ROW === "redis" ? await import("resumable-stream")
  : ROW === "iqstream" ? await import("../../clients/resumable-stream/src/index.js")
    : ROW === "iqstream-base" ? await import(process.env.BASE_PACKAGE) : {};
// the package's batches on (its default is off: batchMs 0); BATCH_MS=0 measures it as shipped
const context = createResumableStreamContext?.({ waitUntil: null, batchMs: Number(process.env.BATCH_MS ?? 50) });
const GAP_MS = Number(process.env.GAP_MS ?? 20);
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 1500);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function POST(chatId, streamId) {
  const stream = createUIMessageStream({
    async execute({ writer }) {
      // paced by schedule, not by sleeps in a row, so the run's length does not drift with load
      const t0 = performance.now();
      let due = 0;
      for (const chunk of runChunks(chatId)) {
        due += chunk.type === "tool-output-available" ? PAUSE_MS : GAP_MS;
        const wait = t0 + due - performance.now();
        if (wait > 0) await sleep(wait);
        writer.write(chunk);
      }
    },
  });
  return createUIMessageStreamResponse({
    stream,
    headers: { "x-stream-id": streamId },
    ...(context ? {
      async consumeSseStream({ stream: sse }) {
        await context.createNewResumableStream(streamId, () => sse);
      },
    } : {}),
  });
}

async function GET(streamId) {
  if (!context) return new Response(null, { status: 204 });
  return new Response(await context.resumeExistingStream(streamId), { headers: UI_MESSAGE_STREAM_HEADERS });
}

async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  const reader = response.body.getReader();
  res.on("close", () => { reader.cancel().catch(() => {}); });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch { /* cancelled */ }
  res.end();
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://x");
    const post = /^\/api\/chat\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const get = /^\/api\/chat\/([^/]+)\/stream\/([^/]+)$/.exec(url.pathname);
    if (req.method === "POST" && post) { req.resume(); return await send(res, POST(post[1], post[2])); }
    if (req.method === "GET" && get) return await send(res, await GET(get[2]));
    res.writeHead(404).end();
  } catch (e) {
    console.error(e);
    if (!res.headersSent) res.writeHead(500);
    res.end(String(e));
  }
});
server.keepAliveTimeout = 60_000;
// a clean exit on SIGTERM, so that a --cpu-prof profile (bench.js PROFILE_DIR) is written
process.on("SIGTERM", () => process.exit(0));
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
