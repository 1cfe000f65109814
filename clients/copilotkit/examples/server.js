// A CopilotKit runtime (v2) whose threads live in IQ-Stream, for Node's http server.
// IQSTREAM_URL: IQ-Stream's address; IQSTREAM_JWT_SECRET: its --jwt-secret (dev mode prints it as SECRET).
import { CopilotRuntime, createCopilotRuntimeHandler } from "@copilotkit/runtime/v2";
import { createCopilotNodeHandler } from "@copilotkit/runtime/v2/node";
import { IqStreamAgentRunner } from "@iqstream/copilotkit";

/** CopilotKit's runtime for your agents, e.g. `{ assistant: new HttpAgent({ url: "http://agent:8000" }) }`. */
export function createRuntime(agents) {
  return new CopilotRuntime({
    agents,
    runner: new IqStreamAgentRunner({ baseUrl: process.env.IQSTREAM_URL, jwtSecret: process.env.IQSTREAM_JWT_SECRET }),
  });
}

/** Its HTTP endpoints under /api (POST /api/agent/:agentId/run, .../connect, .../stop/:threadId): a request handler. */
export function createHandler(runtime) {
  return createCopilotNodeHandler(createCopilotRuntimeHandler({ runtime, basePath: "/api" }));
}

// In your server: http.createServer(createHandler(createRuntime({ assistant: myAgent }))).listen(3000);
