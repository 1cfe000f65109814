// Offsets, the chunk codec and run ids, without a server.
import assert from "node:assert/strict";
import { test } from "node:test";
import { closeEvent, decodeChunk, encodeChunk, isCloseEvent, WRAPPED_NAME } from "../src/chunk-codec.js";
import { decodeOffset, encodeOffset } from "../src/offset.js";
import { iqRunIdOf } from "../src/index.js";

test("an offset names its run and event, and the offsets of a run sort in append order", () => {
  const offsets = [1, 2, 9, 10, 11, 99, 100, 2147483647].map((id) => encodeOffset("tsa.run:7", id));
  assert.equal(offsets[0], "iq1:tsa.run:7:0000000001");
  assert.deepEqual([...offsets].sort(), offsets);
  assert.deepEqual(offsets.map(decodeOffset).map((d) => d.eventId), [1, 2, 9, 10, 11, 99, 100, 2147483647]);
  assert.deepEqual(decodeOffset(offsets[3]), { iqRunId: "tsa.run:7", eventId: 10 });
  for (const o of offsets) assert.doesNotMatch(o, /[\r\n\0 ]/);
});

test("an offset this adapter did not mint is refused, naming it", () => {
  for (const bad of ["memory:v1:r:1", "iq1:r:1", "iq1:r:00000000001", "iq1::0000000001", "iq1:r/x:0000000001",
    "iq1:r:0000000000", "iq1:r:2147483648", "iq1:r:00000000-1", "-1", ""]) {
    assert.throws(() => decodeOffset(bad), (err) => err instanceof TypeError && err.message.includes(JSON.stringify(bad)), bad);
  }
});

test("a chunk is stored as its own JSON; an intermediate RUN_FINISHED (tool_calls) is wrapped, and unwrapped exactly", () => {
  const text = { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "hé \"x\"\n", timestamp: 1 };
  assert.equal(encodeChunk(text), JSON.stringify(text));
  const toolTurn = { type: "RUN_FINISHED", runId: "r", threadId: "t", timestamp: 2, metadata: { tanstack: { finishReason: "tool_calls" } } };
  const topLevel = { type: "RUN_FINISHED", runId: "r", finishReason: "tool_calls" };
  const last = { type: "RUN_FINISHED", runId: "r", threadId: "t", metadata: { tanstack: { finishReason: "stop" } } };
  const interrupt = { type: "RUN_FINISHED", runId: "r", finishReason: "tool_calls", outcome: { type: "interrupt" } };
  const lookalike = { type: "CUSTOM", name: WRAPPED_NAME, value: { type: "RUN_FINISHED" } };
  const closeLookalike = closeEvent({ threadId: "t", runId: "r" });
  assert.ok(isCloseEvent(closeLookalike));
  for (const chunk of [toolTurn, topLevel, lookalike, closeLookalike]) {
    const stored = JSON.parse(encodeChunk(chunk));
    assert.equal(stored.type, "CUSTOM");
    assert.ok(!isCloseEvent(stored));
    assert.equal(JSON.stringify(decodeChunk(stored)), JSON.stringify(chunk));
  }
  for (const chunk of [text, last, interrupt]) assert.equal(encodeChunk(chunk), JSON.stringify(chunk));
  assert.throws(() => encodeChunk({ delta: "no type" }), TypeError);
});

test("a TanStack run id becomes an IQ-Stream run id: as it is when valid, else hashed", () => {
  assert.equal(iqRunIdOf("run-1764500000000-k3x9ab"), "tsa.run-1764500000000-k3x9ab");
  assert.equal(iqRunIdOf("r1", "app."), "app.r1");
  const hashed = iqRunIdOf("a run/with spaces");
  assert.match(hashed, /^tsa\.~[A-Za-z0-9_-]{43}$/);
  assert.equal(iqRunIdOf("a run/with spaces"), hashed);
  assert.notEqual(iqRunIdOf("a run/with spaces!"), hashed);
  assert.match(iqRunIdOf("x".repeat(200)), /^tsa\.~/);
  assert.match(iqRunIdOf("~looks-hashed"), /^tsa\.~[A-Za-z0-9_-]{43}$/);
  assert.throws(() => iqRunIdOf(""), TypeError);
  assert.throws(() => iqRunIdOf("a\nb"), TypeError);
});
