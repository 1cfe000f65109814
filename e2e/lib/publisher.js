// Publishes a run the way a backend does: one streamed POST /v1/runs/{runId}/events (NDJSON, chunked),
// writing each event when the test says so.
import http from "node:http";

/**
 * @returns {{send: (event: object) => void, end: () => Promise<{status: number, body: any}>}}
 */
export function openPublisher(baseUrl, runId, token) {
  const url = new URL(`/v1/runs/${encodeURIComponent(runId)}/events`, baseUrl);
  const request = http.request(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-ndjson", Authorization: `Bearer ${token}` },
  });
  request.flushHeaders();
  const response = new Promise((resolve, reject) => {
    request.on("error", reject);
    request.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => {
        let body = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: keep the text for the assertion message
        }
        resolve({ status: res.statusCode, body });
      });
    });
  });
  response.catch(() => {}); // observed by end()
  return {
    send(event) {
      request.write(JSON.stringify(event) + "\n");
    },
    end() {
      request.end();
      return response;
    },
  };
}
