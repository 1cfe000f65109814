// A TanStack AI server instance in its own Node process, as a pod or a serverless instance would be: the docs'
// example (examples/chat.js, configured by IQSTREAM_URL and IQSTREAM_TOKEN) under Node's http server on an
// ephemeral loopback port, with the scripted model. Started by support.js's startInstance over IPC: it sends
// { url } once it listens, then answers { id, op }: hold (the model pauses mid-answer), open (it goes on),
// appends (the NDJSON bodies this process POSTed to IQ-Stream, in order: what its producer stored), requests
// (the method, URL and Last-Event-ID of each request it served).
// It exits when the test process goes away (the IPC channel closes).
import http from "node:http";
import { Readable } from "node:stream";
import { chatRoutes } from "../examples/chat.js";
import { lookup, scriptedModel } from "./model.js";

const control = {};
let release;
const appends = [];
const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (url, init) => {
  if (init?.method === "POST" && typeof init.body === "string" && init.body.length > 0) appends.push(init.body);
  return realFetch(url, init);
};

const routes = chatRoutes({ adapter: scriptedModel(control), tools: [lookup] });

/** Node's request as a Web Request, the Web Response back onto Node's response. */
const server = http.createServer(async (req, res) => {
  requests.push({ method: req.method, url: req.url, lastEventId: req.headers["last-event-id"] ?? null });
  try {
    const url = `http://${req.headers.host}${req.url}`;
    const body = req.method === "POST" ? Readable.toWeb(req) : undefined;
    const request = new Request(url, { method: req.method, headers: req.headers, body, duplex: "half" });
    const handler = routes[req.method];
    const response = handler ? await handler(request) : new Response("method not allowed", { status: 405 });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return res.end();
    const reader = response.body.getReader();
    res.on("close", () => reader.cancel().catch(() => {}));
    while (true) {
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

const ops = {
  hold() {
    control.hold = new Promise((r) => { release = r; });
  },
  open() {
    release?.();
    delete control.hold;
  },
  appends: () => appends,
  requests: () => requests,
};

process.on("message", async (request) => {
  try {
    process.send({ id: request.id, value: await ops[request.op](request) });
  } catch (err) {
    process.send({ id: request.id, error: String(err?.stack ?? err) });
  }
});
process.on("disconnect", () => process.exit(0));
server.listen(0, "127.0.0.1", () => process.send({ url: `http://127.0.0.1:${server.address().port}/api/chat` }));
