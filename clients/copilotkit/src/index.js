/**
 * @iqstream/copilotkit: CopilotKit's AgentRunner backed by IQ-Stream.
 *
 * - IqStreamAgentRunner: `new CopilotRuntime({ agents, runner: new IqStreamAgentRunner({ baseUrl, jwtSecret }) })`.
 * - RunPublisher / publishEvents: publish an AG-UI run to IQ-Stream from any Node backend.
 *
 * @module
 */
export { IqStreamAgentRunner, threadKey, mintToken, isStopEvent, closeStopped } from "./runner.js";
export { RunPublisher, publishEvents } from "./publisher.js";
