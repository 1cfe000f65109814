// --sse-lifetime with @durable-streams/client 0.2.7, unchanged: a node whose SSE responses end after 1 s (as one
// behind a CDN would be run with 60 s). The client's SSE read reconnects from its offset each time a response ends:
// more than one SSE request is made, and every message reaches it exactly once, in order.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { DurableStream, stream } from "@durable-streams/client";
import { SERVER, startNode, uniquePath, waitFor } from "./support.js";

const skip = SERVER !== "iqstream" && "--sse-lifetime is IQ-Stream's";
let node;
before(async () => {
  if (!skip) node = await startNode(["--durability", "memory", "--sse-lifetime", "1s", "--durable-streams-long-poll", "300ms"]);
});
after(async () => { await node?.stop(); });

const bearer = (token) => ({ Authorization: `Bearer ${token}` });

describe("--sse-lifetime", { skip }, () => {
  test("each SSE response ends at the lifetime and the client goes on from its offset", async () => {
    const streamPath = uniquePath("lifetime");
    const url = node.streamUrl(streamPath);
    const handle = await DurableStream.create({ url, headers: bearer(node.token({ publish: [streamPath] })), contentType: "application/json" });
    let sseRequests = 0;
    const counting = (input, init) => {
      if (String(input).includes("live=sse")) sseRequests++;
      return fetch(input, init);
    };
    const items = [];
    const offsets = [];
    const res = await stream({ url, headers: bearer(node.token({ subscribe: [streamPath] })), offset: "-1", live: "sse", json: true, fetch: counting });
    res.subscribeJson((batch) => { items.push(...batch.items); offsets.push(batch.offset); });

    for (let i = 0; i < 5; i++) await handle.append(JSON.stringify({ n: i }));
    await waitFor(() => items.length === 5, "the first five read");
    // the first response ends by itself; the client opens the next one from where it was
    await waitFor(() => sseRequests >= 3, "two more SSE requests after the first response ended", 30_000);
    for (let i = 5; i < 10; i++) await handle.append(JSON.stringify({ n: i }));
    await handle.close();
    await res.closed;
    await waitFor(() => offsets.at(-1) === res.offset, "the subscriber's batch at the session's last offset");

    assert.deepEqual(items, Array.from({ length: 10 }, (_, n) => ({ n })), "every message once, in order, across the responses");
    assert.ok(sseRequests >= 3, `the read was served by several SSE responses (${sseRequests})`);
  });
});
