// A TCP proxy between the browser and the relay that can cut every open connection at once, as a flaky
// network does. It forwards bytes unchanged and, on the side, reads the HTTP/1.1 traffic it carries:
// every request's line and headers, and every response's status, so a test can tell what the browser
// sent on each reconnect (Last-Event-ID) and what the relay answered (200, 204...).
import net from "node:net";

/** Reads HTTP/1.1 messages out of a byte stream: header blocks, then bodies by Content-Length or chunks. */
class HttpMessageReader {
  /** @param {"request"|"response"} kind @param {(head: {startLine: string, headers: Record<string,string>}) => void} onHead */
  constructor(kind, onHead) {
    this.kind = kind;
    this.onHead = onHead;
    this.buffer = Buffer.alloc(0);
    this.state = "head"; // head | fixed | chunk-size | chunk-data | chunk-trailer
    this.remaining = 0;
  }

  push(bytes) {
    this.buffer = Buffer.concat([this.buffer, bytes]);
    for (;;) {
      if (this.state === "head") {
        const end = this.buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const lines = this.buffer.subarray(0, end).toString("latin1").split("\r\n");
        this.buffer = this.buffer.subarray(end + 4);
        const headers = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const head = { startLine: lines[0], headers };
        this.onHead(head);
        const status = this.kind === "response" ? Number(lines[0].split(" ")[1]) : 0;
        if (status === 204 || status === 304 || (status >= 100 && status < 200)) continue;
        if ((headers["transfer-encoding"] || "").toLowerCase().includes("chunked")) {
          this.state = "chunk-size";
        } else if (headers["content-length"]) {
          this.remaining = Number(headers["content-length"]);
          this.state = this.remaining > 0 ? "fixed" : "head";
        } else if (this.kind === "response") {
          this.state = "until-close"; // body ends with the connection
        }
      } else if (this.state === "fixed") {
        const take = Math.min(this.remaining, this.buffer.length);
        this.buffer = this.buffer.subarray(take);
        this.remaining -= take;
        if (this.remaining > 0) return;
        this.state = "head";
      } else if (this.state === "chunk-size") {
        const end = this.buffer.indexOf("\r\n");
        if (end < 0) return;
        const size = parseInt(this.buffer.subarray(0, end).toString("latin1"), 16);
        this.buffer = this.buffer.subarray(end + 2);
        if (size === 0) {
          this.state = "chunk-trailer";
        } else {
          this.remaining = size + 2; // data and its CRLF
          this.state = "chunk-data";
        }
      } else if (this.state === "chunk-data") {
        const take = Math.min(this.remaining, this.buffer.length);
        this.buffer = this.buffer.subarray(take);
        this.remaining -= take;
        if (this.remaining > 0) return;
        this.state = "chunk-size";
      } else if (this.state === "chunk-trailer") {
        const end = this.buffer.indexOf("\r\n");
        if (end < 0) return;
        const line = this.buffer.subarray(0, end);
        this.buffer = this.buffer.subarray(end + 2);
        if (line.length === 0) this.state = "head";
      } else {
        this.buffer = Buffer.alloc(0); // until-close
        return;
      }
    }
  }
}

/**
 * @param {number} targetPort the relay's port on 127.0.0.1
 * @returns {Promise<{port: number, exchanges: Array<{connection: number, method: string, path: string,
 *   headers: Record<string,string>, status?: number}>, connections: () => number,
 *   cutAll: () => number, close: () => Promise<void>}>}
 */
export async function startCuttingProxy(targetPort) {
  const exchanges = [];
  const open = new Set();
  let connectionCount = 0;
  const server = net.createServer((client) => {
    const connection = ++connectionCount;
    const pending = []; // exchanges of this connection waiting for their response
    const upstream = net.connect(targetPort, "127.0.0.1");
    const pair = { client, upstream };
    open.add(pair);
    const requests = new HttpMessageReader("request", ({ startLine, headers }) => {
      const [method, path] = startLine.split(" ");
      const exchange = { connection, method, path, headers };
      exchanges.push(exchange);
      pending.push(exchange);
    });
    const responses = new HttpMessageReader("response", ({ startLine }) => {
      const exchange = pending.shift();
      if (exchange) exchange.status = Number(startLine.split(" ")[1]);
    });
    client.on("data", (bytes) => {
      requests.push(bytes);
      upstream.write(bytes);
    });
    upstream.on("data", (bytes) => {
      responses.push(bytes);
      client.write(bytes);
    });
    const finish = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    client.on("close", finish);
    upstream.on("close", finish);
    client.on("error", finish);
    upstream.on("error", finish);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    exchanges,
    connections: () => connectionCount,
    /** Drops every open connection at once, both sides, without a goodbye (as a lost network does). */
    cutAll() {
      const n = open.size;
      for (const { client, upstream } of open) {
        client.resetAndDestroy();
        upstream.resetAndDestroy();
      }
      open.clear();
      return n;
    },
    async close() {
      for (const { client, upstream } of open) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
