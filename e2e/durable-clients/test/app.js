// An app server instance: Web-standard route handlers (Request -> Response, as a Next.js route or a worker has
// them) under Node's http server on an ephemeral loopback port. The tests start two, each configured with one
// IQ-Stream node's URL, sharing one chat store (the app's database), as two pods of an app behind a balancer.
import http from "node:http";
import { Readable } from "node:stream";

/** Starts `handle(request: Request) => Promise<Response>` on 127.0.0.1; resolves with { url, close }. */
export async function serveApp(handle) {
  const server = http.createServer(async (req, res) => {
    try {
      const url = `http://${req.headers.host}${req.url}`;
      const body = req.method === "POST" ? Readable.toWeb(req) : undefined;
      const response = await handle(new Request(url, { method: req.method, headers: req.headers, body, duplex: "half" }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return res.end();
      const reader = response.body.getReader();
      res.on("close", () => reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end(String(err?.stack ?? err));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** The answer the scripted models give: WORDS.length words, held before word HOLD_AT while a hold is set. */
export const WORDS = Array.from({ length: 30 }, (_, i) => `w${i} `);
export const HOLD_AT = 12;

/** A hold the test sets and releases: the model pauses mid-answer until `release()`. */
export function modelHold() {
  let release;
  const held = new Promise((r) => { release = r; });
  let reached;
  const atHold = new Promise((r) => { reached = r; });
  return { held, release, atHold, reached };
}

/** Records the URL of every fetch this process makes (what the unchanged clients asked of which node). */
export function recordFetches() {
  const urls = [];
  const real = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    urls.push({ method: init?.method ?? input?.method ?? "GET", url: String(input?.url ?? input) });
    return real(input, init);
  };
  return { urls, restore: () => { globalThis.fetch = real; } };
}
