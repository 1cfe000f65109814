// Unit tests of the SSE parser: no server needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SseParser } from "../src/sse.js";

function parseInChunks(text, chunkSize) {
  const messages = [];
  const retries = [];
  const comments = [];
  const parser = new SseParser({
    onMessage: (m) => messages.push(m),
    onRetry: (ms) => retries.push(ms),
    onComment: (c) => comments.push(c),
  });
  for (let i = 0; i < text.length; i += chunkSize) parser.push(text.slice(i, i + chunkSize));
  parser.end();
  return { messages, retries, comments };
}

const STREAM = 'retry: 1000\n\nid: 1\ndata: {"type":"RUN_STARTED"}\n\n: hb\n\nid: 2\ndata: {"type":"X","delta":"a: b"}\n\n';

test("parsesIdsDataRetryAndCommentsWhateverTheChunking", () => {
  for (const size of [1, 2, 3, 7, 1000]) {
    const { messages, retries, comments } = parseInChunks(STREAM, size);
    assert.deepEqual(retries, [1000], `chunk ${size}`);
    assert.deepEqual(comments, ["hb"], `chunk ${size}`);
    assert.deepEqual(messages, [
      { id: "1", event: "message", data: '{"type":"RUN_STARTED"}' },
      { id: "2", event: "message", data: '{"type":"X","delta":"a: b"}' },
    ], `chunk ${size}`);
  }
});

test("acceptsCrLfAndCrLineEndingsEvenSplitAcrossChunks", () => {
  const crlf = STREAM.replaceAll("\n", "\r\n");
  const cr = STREAM.replaceAll("\n", "\r");
  for (const text of [crlf, cr]) {
    for (const size of [1, 2, 5]) {
      const { messages, retries } = parseInChunks(text, size);
      assert.equal(messages.length, 2);
      assert.equal(messages[1].id, "2");
      assert.equal(messages[1].data, '{"type":"X","delta":"a: b"}');
      assert.deepEqual(retries, [1000]);
    }
  }
});

test("joinsMultipleDataLinesAndDropsAnUnterminatedEvent", () => {
  const { messages } = parseInChunks("event: custom\ndata: a\ndata:b\n\nid: 9\ndata: never dispatched", 4);
  assert.deepEqual(messages, [{ id: undefined, event: "custom", data: "a\nb" }]);
});

test("ignoresInvalidRetryAndStripsBom", () => {
  const { messages, retries } = parseInChunks("\uFEFFretry: soon\ndata: x\n\n", 3);
  assert.deepEqual(retries, []);
  assert.deepEqual(messages, [{ id: undefined, event: "message", data: "x" }]);
});
