// A CopilotKit runtime instance in its own process (so a test can SIGKILL it): IqStreamAgentRunner on
// IQ_URL with IQ_SECRET, the scripted agent held at its pause on thread HOLD_THREAD. Prints its URL.
import { IqStreamAgentRunner } from "../src/index.js";
import { ScriptedAgent, latch, startRuntime } from "./support.js";

const control = { holds: { [process.env.HOLD_THREAD]: latch() }, aborts: 0, runs: 0 };
const runtime = await startRuntime({
  agents: { assistant: new ScriptedAgent(control) },
  runner: new IqStreamAgentRunner({ baseUrl: process.env.IQ_URL, jwtSecret: process.env.IQ_SECRET }),
});
console.log(`URL ${runtime.url}`);
