// A tiny static web server for pages a test writes itself (the page's origin differs from the relay's,
// as an app's page does in production).
import http from "node:http";

/**
 * @param {Record<string, string>} pages path -> HTML
 * @returns {Promise<{origin: string, close: () => Promise<void>}>}
 */
export async function startStaticServer(pages) {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    const page = pages[path];
    if (page === undefined) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" }).end(page);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}
