// Type declarations for @iqstream/copilotkit (hand-written; the sources carry JSDoc too).
import {
  AgentRunner,
  AgentRunnerConnectRequest,
  AgentRunnerIsRunningRequest,
  AgentRunnerRunRequest,
  AgentRunnerStopRequest,
} from "@copilotkit/runtime/v2";
import { BaseEvent } from "@ag-ui/client";
import { Observable } from "rxjs";

export interface IqStreamAgentRunnerOptions {
  /** IQ-Stream's URL, e.g. "http://iqstream:8080". */
  baseUrl: string;
  /** A server-side token with publish and subscribe rights on `<prefix>*`, the threads right on the app's thread ids (e.g. `"threads": ["*"]`) and an `exp`, or a function returning a fresh one. */
  token?: string | (() => string | Promise<string>);
  /** Instead of `token`: the server's HS256 `--jwt-secret`; the runner mints 5-minute tokens for `<prefix>*` and every thread. */
  jwtSecret?: string;
  /** Run id prefix of CopilotKit threads (default "ck."). */
  prefix?: string;
}

/** A held run of a thread, as `GET /v1/threads/{threadId}/runs` lists it. */
export interface HeldRun {
  runId: string;
  running: boolean;
  events: number;
  /** epoch ms */
  startedAt: number;
  /** epoch ms; null while running */
  endedAt: number | null;
}

/** CopilotKit's AgentRunner with threads in IQ-Stream: connect/isRunning/stop from any runtime instance. */
export declare class IqStreamAgentRunner extends AgentRunner {
  constructor(options: IqStreamAgentRunnerOptions);
  run(request: AgentRunnerRunRequest): Observable<BaseEvent>;
  connect(request: AgentRunnerConnectRequest): Observable<BaseEvent>;
  isRunning(request: AgentRunnerIsRunningRequest): Promise<boolean>;
  stop(request: AgentRunnerStopRequest): Promise<boolean | undefined>;
  /** The IQ-Stream run id of a thread's `n`th run. */
  runIdOf(threadId: string, n: number): string;
  /** The thread's held runs, oldest first ([] for an unknown thread). */
  threadRuns(threadId: string): Promise<HeldRun[]>;
  /** A run's events, waiting for its end; [] when it is gone. */
  readAll(runId: string, options?: { signal?: AbortSignal; from?: number }): Promise<BaseEvent[]>;
  /** The token used for IQ-Stream requests. */
  token(): Promise<string | undefined>;
}

/** The part of a run id naming a thread: the id when it is 1-48 of [A-Za-z0-9_-], else a hash. */
export declare function threadKey(threadId: string): string;
/** True for IQ-Stream's stop event (RUN_ERROR with code STOPPED). */
export declare function isStopEvent(event: unknown): boolean;
/** A run's events with a STOPPED RUN_ERROR replaced by CopilotKit's closing events for a stop. */
export declare function closeStopped(events: BaseEvent[]): BaseEvent[];
/** An HS256 JWT with `exp` = now + ttlS. */
export declare function mintToken(secret: string, claims: Record<string, unknown>, ttlS?: number): string;

export { RunPublisher, publishEvents, PublishAnswer } from "@iqstream/client/publisher";
