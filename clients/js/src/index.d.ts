// Type declarations for @iqstream/client (hand-written; the sources carry JSDoc too).
import { AbstractAgent, AgentConfig, AgentSubscriber, BaseEvent, RunAgentInput, RunAgentParameters, RunAgentResult } from "@ag-ui/client";
import { Observable } from "rxjs";

/** Web Storage shape: localStorage, sessionStorage, or your own. */
export interface RunStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** What is stored per reader so a reloaded page can pick its run up again. */
export interface StoredRun {
  runId: string;
  /** The id of the last event handed on (0: none yet). */
  lastEventId: number;
  /** The subscribe token it was read with (scoped to that run). */
  token?: string;
  threadId?: string;
}

/** A subscribe token, or a function asked for one before every (re)connection. */
export type TokenSource = string | (() => string | undefined | Promise<string | undefined>);

export interface ReconnectInfo {
  error: unknown;
  attempt: number;
  delayMs: number;
  lastEventId: number;
}

export interface ConnectInfo {
  attempt: number;
  lastEventId: number;
}

export interface ReadRunOptions {
  /** IQ-Stream base URL, e.g. "https://relay.example.com". */
  baseUrl: string;
  runId: string;
  token?: TokenSource;
  /**
   * "headers" (default): Authorization and Last-Event-ID headers.
   * "query": ?access_token= and ?lastEventId=, so a cross-origin browser request needs no CORS preflight.
   */
  transport?: "headers" | "query";
  /** Start after this event id (default 0: from the start). */
  lastEventId?: number;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Failed connections in a row before ConnectionLostError (default 10). */
  maxAttempts?: number;
  /** Reconnect delay until the server sends `retry:` (default 1000). */
  initialDelayMs?: number;
  /** Cap of the doubling delay (default 30000). */
  maxDelayMs?: number;
  onConnect?: (info: ConnectInfo) => void;
  onReconnect?: (info: ReconnectInfo) => void;
}

export interface RunEvent {
  /** The event's id in its run: 1, 2, 3... */
  id: number;
  /** The AG-UI event. */
  event: BaseEvent & { type: string; [key: string]: unknown };
  /** The event's JSON as relayed. */
  data: string;
}

/** RUN_FINISHED and RUN_ERROR. */
export declare const TERMINAL_EVENT_TYPES: readonly string[];

/** A run's events from lastEventId + 1 to its terminal event, reconnecting with Last-Event-ID. */
export declare function readRun(options: ReadRunOptions): AsyncGenerator<RunEvent, void, undefined>;

export interface FollowRunOptions extends Omit<ReadRunOptions, "runId"> {
  /** Omit to continue the stored run. */
  runId?: string;
  /** Default: localStorage in browsers, memory elsewhere; null disables. */
  storage?: RunStore | null;
  storageKey: string;
}

/** readRun with a stored cursor: after a reload it continues with exactly the next event. */
export declare function followRun(options: FollowRunOptions): AsyncGenerator<RunEvent, void, undefined>;

export interface StartedRun {
  /** The IQ-Stream run id your backend publishes to. */
  runId: string;
  /** A subscribe token for that run only. */
  token?: string;
}

export interface IqStreamAgentConfig extends AgentConfig {
  /** IQ-Stream base URL. */
  baseUrl: string;
  /** A run to read, when there is no startRun. */
  runId?: string;
  /** Its subscribe token. */
  token?: string;
  /** Asked for a fresh subscribe token before each connection (wins over stored tokens). */
  getToken?: (runId: string) => string | Promise<string>;
  /** Asks your backend to start a run for this AG-UI input; returns its IQ-Stream run id and a subscribe token. */
  startRun?: (input: RunAgentInput, ctx: { signal: AbortSignal }) => Promise<StartedRun>;
  /** Default: localStorage in browsers, memory elsewhere; null disables resume after reload. */
  storage?: RunStore | null;
  /** Default `iqstream:run:<threadId>`. */
  storageKey?: string | ((agent: IqStreamAgent) => string);
  transport?: "headers" | "query";
  fetch?: typeof fetch;
  maxAttempts?: number;
  maxDelayMs?: number;
  onConnect?: (info: ConnectInfo) => void;
  onReconnect?: (info: ReconnectInfo) => void;
}

/**
 * An AG-UI agent reading its runs from IQ-Stream: drop-in for HttpAgent, with runs that
 * survive dropped connections (Last-Event-ID) and page reloads (connectAgent reattaches).
 */
export declare class IqStreamAgent extends AbstractAgent {
  constructor(config: IqStreamAgentConfig);
  baseUrl: string;
  runId?: string;
  token?: string;
  storage: RunStore | null;
  abortController: AbortController;
  /** The IQ-Stream run being (or last) read. */
  currentRunId?: string;
  /** Id of the last event handed to AG-UI in the current run. */
  lastEventId: number;
  /** After a reattach: how far the page had got before the reload. */
  resumedFromEventId?: number;
  readonly storageKey: string;
  /** The unfinished run stored for this thread, if any. */
  storedRun(): StoredRun | null;
  runAgent(parameters?: RunAgentParameters & { abortController?: AbortController }, subscriber?: AgentSubscriber): Promise<RunAgentResult>;
  connectAgent(parameters?: RunAgentParameters & { abortController?: AbortController }, subscriber?: AgentSubscriber): Promise<RunAgentResult>;
  run(input: RunAgentInput): Observable<BaseEvent>;
  protected connect(input: RunAgentInput): Observable<BaseEvent>;
  abortRun(): void;
  clone(): IqStreamAgent;
}

export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

/** A streaming text/event-stream parser (any chunking; \n, \r\n or \r line endings). */
export declare class SseParser {
  constructor(handlers: {
    onMessage: (message: SseMessage) => void;
    onRetry?: (retryMs: number) => void;
    onComment?: (text: string) => void;
  });
  push(text: string): void;
  end(): void;
}

export declare function memoryStorage(): RunStore & { map: Map<string, string> };
export declare function defaultStorage(): RunStore;

export declare class IqStreamError extends Error {
  constructor(message: string, details?: { status?: number; code?: string; runId?: string; cause?: unknown });
  /** HTTP status, when the error is an HTTP answer. */
  status?: number;
  /** The server's error code: unauthenticated, forbidden, not_found, gone, ... */
  code?: string;
  runId?: string;
}
/** 401: no token, a bad or expired one. */
export declare class UnauthorizedError extends IqStreamError {}
/** 403: a valid token without the subscribe right for this run. */
export declare class ForbiddenError extends IqStreamError {}
/** 404: no such run (after the server's --await-run wait). */
export declare class RunNotFoundError extends IqStreamError {}
/** 410: the run ended and its retention expired. */
export declare class RunGoneError extends IqStreamError {}
/** Any other answer a retry cannot fix (400 ...). */
export declare class HttpStatusError extends IqStreamError {}
/** Reconnects kept failing; `cause` is the last failure. */
export declare class ConnectionLostError extends IqStreamError {}
/**
 * The server sent an event that is not the next one: `code` is "duplicate_event" (an id already handed
 * on), "event_gap" (an id that skips ahead), "bad_event_id" or "bad_event_json".
 */
export declare class StreamIntegrityError extends IqStreamError {
  code: "duplicate_event" | "event_gap" | "bad_event_id" | "bad_event_json";
  /** For duplicate_event and event_gap: the id that was due. */
  expectedId?: number;
  /** For duplicate_event and event_gap: the id that came. */
  receivedId?: number;
}
