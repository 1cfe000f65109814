// The test page: CopilotKit's own React chat (v2), pointed at the runtime under /api, with an
// explicit thread id from ?thread= (so the chat calls connect() on mount, as after a reload).
import React from "react";
import { createRoot } from "react-dom/client";
import { CopilotKitProvider, CopilotChat } from "@copilotkit/react-core/v2";

const threadId = new URLSearchParams(location.search).get("thread");
createRoot(document.getElementById("root")).render(
  <CopilotKitProvider runtimeUrl="/api">
    <CopilotChat agentId="assistant" threadId={threadId} />
  </CopilotKitProvider>,
);
