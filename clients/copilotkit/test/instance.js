// A CopilotKit runtime instance in its own Node process, as a serverless instance or a pod would be:
// examples/server.js (the docs' example, configured by IQSTREAM_URL and IQSTREAM_JWT_SECRET) serving the
// scripted agent on an ephemeral loopback port. Started by support.js's startInstance over an IPC channel:
// it sends { url } once it listens, then answers the test's requests { id, op, threadId }:
//   hold (the agent pauses on that thread, before step `at` or MID), open (it goes on),
//   state ({ runs, aborted: thread ids whose agent observed abortRun() }), isRunning (its runner's answer).
// It exits when the test process goes away (the IPC channel closes), so no instance outlives its test.
import http from "node:http";
import { createHandler, createRuntime } from "../examples/server.js";
import { ScriptedAgent, latch } from "./support.js";

const control = { holds: {}, aborts: 0, runs: 0, aborted: [] };
const runtime = createRuntime({ assistant: new ScriptedAgent(control) });
const server = http.createServer(createHandler(runtime));

const ops = {
  hold({ threadId, at }) {
    control.holds[threadId] = latch();
    if (at !== undefined) control.holdAt = at;
  },
  open({ threadId }) {
    control.holds[threadId]?.open();
    delete control.holds[threadId];
  },
  state: () => ({ runs: control.runs, aborts: control.aborts, aborted: control.aborted }),
  isRunning: ({ threadId }) => runtime.runner.isRunning({ threadId }),
};

process.on("message", async (request) => {
  try {
    process.send({ id: request.id, value: await ops[request.op](request) });
  } catch (err) {
    process.send({ id: request.id, error: String(err?.stack ?? err) });
  }
});
process.on("disconnect", () => process.exit(0));
server.listen(0, "127.0.0.1", () => process.send({ url: `http://127.0.0.1:${server.address().port}/api` }));
