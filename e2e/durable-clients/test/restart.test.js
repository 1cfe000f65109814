// @durable-streams/client 0.2.7, unchanged, reading from a node that is stopped and started again mid-read: one
// IQ-Stream node with --durability disk and a data directory; the client's live read (SSE and long-poll) is parked
// at the stream's tail when the node gets SIGKILL (a crash) or SIGTERM (a drain), and the node comes back on the
// same port from the same directory. The client retries on its own (its fetch backoff) from its offset: every
// message, written before and after the restart, reaches the reader exactly once and in order, and the read ends at
// the stream's closure.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DurableStream, stream } from "@durable-streams/client";
import { SERVER, startNode, uniquePath, waitFor } from "./support.js";

const skip = SERVER !== "iqstream" && "a restart of an IQ-Stream node (the reference server keeps nothing on disk)";
let node;
let dataDir;
before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(path.join(tmpdir(), "iqstream-durable-restart-"));
  node = await startNode(["--durability", "disk", "--data-dir", dataDir, "--durable-streams-long-poll", "1s"]);
});
after(async () => {
  await node?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const bearer = (token) => ({ Authorization: `Bearer ${token}` });
const message = (i) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `w${i} ` });

/**
 * A live read as an application keeps one: items and the offset after each batch; when the client's session fails
 * (a cut SSE response), a new session from the last offset had. `ended` resolves at the stream's closure, once the
 * subscriber has had the batch at the session's last offset.
 */
function readFrom(url, headers, live) {
  const items = [];
  let offset = "-1";
  let sessions = 0;
  const ended = (async () => {
    for (;;) {
      sessions++;
      const offsets = [];
      const res = await stream({ url, headers, offset, live, json: true });
      res.subscribeJson((batch) => { items.push(...batch.items); offsets.push(batch.offset); offset = batch.offset; });
      const failed = await res.closed.then(() => null, (err) => err);
      if (failed) continue; // resume from `offset`
      await waitFor(() => offsets.at(-1) === res.offset, "the subscriber's batch at the session's last offset", 30_000);
      return { res, items, sessions };
    }
  })();
  return { items, ended };
}

describe(`@durable-streams/client across a restart of its node`, { skip }, () => {
  for (const signal of ["SIGKILL", "SIGTERM"]) {
    for (const live of ["sse", "long-poll"]) {
      test(`a live ${live} read resumes from its offset after ${signal} and a restart: nothing lost, nothing twice`, async () => {
        const streamPath = uniquePath(`restart/${live}`);
        const url = node.streamUrl(streamPath);
        const writer = bearer(node.token({ publish: [streamPath], subscribe: [streamPath] }));
        const handle = await DurableStream.create({ url, headers: writer, contentType: "application/json" });
        for (let i = 0; i < 10; i++) await handle.append(JSON.stringify(message(i)));

        const read = readFrom(url, bearer(node.token({ subscribe: [streamPath] })), live);
        await waitFor(() => read.items.length === 10, "the first ten messages read live");

        await node.kill(signal);
        await node.restart(); // the same port, the same data directory: every acknowledged append recovered
        for (let i = 10; i < 20; i++) await handle.append(JSON.stringify(message(i)));
        await handle.close();
        const { res, items, sessions } = await read.ended;

        assert.deepEqual(items, Array.from({ length: 20 }, (_, i) => message(i)), "every message once, in order");
        assert.equal(res.streamClosed, true, "the read ended at the stream's closure");
        assert.equal(res.offset, (await handle.head()).offset, "the read's offset is the stream's tail");
        // long-poll: the client's own retries carry the read across the restart; SSE: the client's read fails when
        // its response is cut (0.2.7 does not reconnect after a broken SSE body), and the reader resumes from the
        // last offset it had
        if (live === "long-poll") assert.equal(sessions, 1, "the client's one read session went on by itself");
        else assert.equal(sessions, 2, "the SSE read was resumed once, from its saved offset");
      });
    }
  }
});
