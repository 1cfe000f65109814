// The relayed stream is valid AG-UI on the wire: a full WORKLOAD.md run published to the
// server, read back over raw HTTP, and parsed and checked by AG-UI's own client pieces
// (runHttpRequest -> transformHttpEventStream -> verifyEvents) plus @ag-ui/core's schemas.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { runHttpRequest, transformHttpEventStream, verifyEvents } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { lastValueFrom, toArray } from "rxjs";
import { newRunId, publishAll, publishStreaming, startServer } from "./support.js";
import { workloadRun } from "./workload.js";

let server;
before(async () => {
  server = await startServer();
});
after(async () => server?.stop());

async function readWithAgUi(runId) {
  const token = server.token({ subscribe: [runId] });
  let response;
  const http$ = runHttpRequest(async () => {
    response = await fetch(`${server.baseUrl}/v1/runs/${runId}/events`, {
      headers: { Accept: "text/event-stream", Authorization: `Bearer ${token}` },
    });
    return response;
  });
  const events = await lastValueFrom(transformHttpEventStream(http$).pipe(verifyEvents(), toArray()));
  return { events, response };
}

function assertValidAndComplete(events, published) {
  assert.equal(events.length, published.length, "every event arrived");
  assert.deepEqual(events, published, "byte-for-byte the published events, in order");
  for (const [i, e] of events.entries()) {
    const parsed = EventSchemas.safeParse(e);
    assert.ok(parsed.success, `event ${i + 1} (${e.type}) is valid AG-UI 1.0: ${parsed.error}`);
  }
  assert.equal(events[0].type, "RUN_STARTED");
  assert.equal(events.at(-1).type, "RUN_FINISHED");
}

test("aFullWorkloadRunReadBackIsValidAndCompleteForAgUi", async () => {
  const runId = newRunId("workload");
  const published = workloadRun();
  assert.equal(published.length, 429);
  await publishAll(server, runId, published);
  const { events, response } = await readWithAgUi(runId);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /^text\/event-stream/);
  assert.equal(response.headers.get("cache-control"), "no-cache");
  assertValidAndComplete(events, published);
});

test("aLiveRunReadWhileItIsPublishedIsValidAndComplete", async () => {
  const runId = newRunId("workload-live");
  const published = workloadRun();
  // the subscriber comes first and waits for the run (--await-run)
  const reading = readWithAgUi(runId);
  const publishing = publishStreaming(server, runId, published, { gapMs: 0 });
  const [{ events }, reply] = await Promise.all([reading, publishing]);
  assert.deepEqual(reply, { runId, lastEventId: 429, ended: true });
  assertValidAndComplete(events, published);
});
