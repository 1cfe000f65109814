// The routes on Node's http server in place of Next.js's router: POST /api/chat, GET /api/chat/:id/stream,
// a stop route, DELETE /api/chat/:id/stream (not in the docs: resumable-stream cannot stop a stream), and
// GET /api/chat/:id, the chat's stored messages for a page (a Next.js page reads them on the server).
//   PORT (0: ephemeral; the port is printed as "listening <port>"); ROUTES: the routes module (default ./routes.js);
//   RESUMABLE=redis: the stop route uses the original resumable-stream; STATIC_DIR: files served at / (a test page)
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { readChat } from './chat-store.js';
import { modelState } from './model.js';
import { after } from './after.js';

const { POST, GET } = await import(process.env.ROUTES ?? './routes.js');
const { createResumableStreamContext } = await import(
  process.env.RESUMABLE === 'redis' ? 'resumable-stream' : '@iqstream/resumable-stream');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

async function STOP(_, { params }) {
  const { id } = await params;
  const chat = await readChat(id);
  if (chat.activeStreamId == null) return new Response(null, { status: 204 });
  const streamContext = createResumableStreamContext({ waitUntil: after });
  if (typeof streamContext.stopStream !== 'function') {
    return new Response('resumable-stream has no stop', { status: 501 });
  }
  return Response.json({ stopped: await streamContext.stopStream(chat.activeStreamId) });
}

async function toRequest(req, url) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return new Request(url, {
    method: req.method, headers: req.headers, body: chunks.length ? Buffer.concat(chunks) : undefined,
  });
}

async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  const reader = response.body.getReader();
  // the browser went away: cancel our side of the response (the resumable copy goes on)
  res.on('close', () => { reader.cancel().catch(() => {}); });
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
    const url = new URL(req.url, `http://${req.headers.host}`);
    const m = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    const params = m && { params: Promise.resolve({ id: decodeURIComponent(m[1]) }) };
    const chatPath = /^\/api\/chat\/([^/]+)$/.exec(url.pathname);
    if (chatPath && req.method === 'GET') {
      // the page's chatData (a Next.js page reads it with readChat on the server)
      return await send(res, Response.json(await readChat(decodeURIComponent(chatPath[1]))));
    }
    if (req.method === 'POST' && url.pathname === '/api/chat') return await send(res, await POST(await toRequest(req, url)));
    if (m && req.method === 'GET') return await send(res, await GET(req, params));
    if (m && req.method === 'DELETE') return await send(res, await STOP(req, params));
    if (url.pathname === '/debug/model') return await send(res, Response.json(modelState));
    if (req.method === 'GET' && process.env.STATIC_DIR) {
      const name = url.pathname === '/' ? 'index.html' : path.basename(url.pathname);
      const body = await readFile(path.join(process.env.STATIC_DIR, name)).catch(() => null);
      if (body) return res.writeHead(200, { 'content-type': TYPES[path.extname(name)] ?? 'application/octet-stream' }).end(body);
    }
    res.writeHead(404).end();
  } catch (e) {
    console.error(e);
    if (!res.headersSent) res.writeHead(500);
    res.end(String(e));
  }
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
