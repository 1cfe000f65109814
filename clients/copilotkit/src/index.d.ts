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
  /** A server-side token with publish and subscribe rights on `<prefix>*` (and an `exp`), or a function returning a fresh one. */
  token?: string | (() => string | Promise<string>);
  /** Instead of `token`: the server's HS256 `--jwt-secret`; the runner mints 5-minute tokens for `<prefix>*`. */
  jwtSecret?: string;
  /** Run id prefix of CopilotKit threads (default "ck."). */
  prefix?: string;
  /** Runs one thread may hold in IQ-Stream at once (default 16, 1..64). */
  slots?: number;
  /** How long stop() waits for the stopped run to end (default 5000 ms). */
  stopWaitMs?: number;
}

/** A held run of a thread, as `GET /v1/runs/{id}` answers it. */
export interface HeldRun {
  slot: number;
  runId: string;
  events: number;
  lastEventId: number;
  ended: boolean;
  publishing: boolean;
  subscribers: number;
  ageMs: number;
}

/** CopilotKit's AgentRunner with threads in IQ-Stream: connect/isRunning/stop from any runtime instance. */
export declare class IqStreamAgentRunner extends AgentRunner {
  constructor(options: IqStreamAgentRunnerOptions);
  run(request: AgentRunnerRunRequest): Observable<BaseEvent>;
  connect(request: AgentRunnerConnectRequest): Observable<BaseEvent>;
  isRunning(request: AgentRunnerIsRunningRequest): Promise<boolean>;
  stop(request: AgentRunnerStopRequest): Promise<boolean | undefined>;
  /** The IQ-Stream run id of a thread's slot. */
  runIdOf(threadId: string, slot: number): string;
  /** The thread's held runs (oldest first) and its free slots. */
  threadRuns(threadId: string): Promise<{ held: HeldRun[]; free: number[] }>;
  /** A run's events, waiting for its end; [] when it is gone. */
  readAll(runId: string, options?: { signal?: AbortSignal; from?: number }): Promise<BaseEvent[]>;
  /** The token used for IQ-Stream requests. */
  token(): Promise<string | undefined>;
}

/** The part of a run id naming a thread: the id when it is 1-48 of [A-Za-z0-9_-], else a hash. */
export declare function threadKey(threadId: string): string;
/** An HS256 JWT with `exp` = now + ttlS. */
export declare function mintToken(secret: string, claims: Record<string, unknown>, ttlS?: number): string;

export interface PublishAnswer {
  status: number;
  body: any;
}

/** One run streamed as a single chunked NDJSON POST held open for the run's life. */
export declare class RunPublisher {
  constructor(options: { baseUrl: string; runId: string; token?: string; onAnswer?: (a: PublishAnswer) => void });
  readonly runId: string;
  /** True once the server answered (before end(): a refusal). */
  readonly answered: boolean;
  readonly answer: Promise<PublishAnswer>;
  open(): this;
  send(event: object): boolean;
  end(): Promise<PublishAnswer>;
  abort(): void;
}

/** Publishes events as one request. */
export declare function publishEvents(options: { baseUrl: string; runId: string; token?: string }, events: object[]): Promise<PublishAnswer>;
