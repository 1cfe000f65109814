// Reads a whole text/event-stream response (until the server ends it) into its events, per the
// EventSource parsing rules: "\n", "\r\n" or "\r" line ends; data lines joined by "\n"; comments skipped.

/** @returns {Promise<{status: number, headers: Headers, retry?: number, events: Array<{id?: string, data: string}>}>} */
export async function readEventStream(url, { headers = {}, timeoutMs = 30_000 } = {}) {
  let response;
  let text;
  try {
    response = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: AbortSignal.timeout(timeoutMs) });
    if (response.status !== 200) {
      await response.body?.cancel();
      return { status: response.status, headers: response.headers, events: [] };
    }
    text = await response.text();
  } catch (e) {
    throw new Error(`GET ${String(url).replace(/access_token=[^&]*/, "access_token=…")} (${JSON.stringify(headers).replace(/Bearer [^"]*/, "Bearer …")}): ${e.message}: ${e.cause?.message ?? ""}`);
  }
  const result = { status: response.status, headers: response.headers, events: [] };
  let data = [];
  let id;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      if (data.length > 0) result.events.push({ id, data: data.join("\n") });
      data = [];
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "id") id = value;
    else if (field === "retry") result.retry = Number(value);
  }
  return result;
}
