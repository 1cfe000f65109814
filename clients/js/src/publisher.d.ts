// Type declarations for @iqstream/client/publisher (Node only).

/** The server's answer to a publish: its status and body (parsed when JSON). */
export interface PublishAnswer {
  status: number;
  body: any;
}

/** One run streamed as a single chunked NDJSON POST held open for the run's life. */
export declare class RunPublisher {
  /**
   * `restore` (default true) keeps the run's event lines, at most `restoreBufferBytes` (default 8 MiB), to continue
   * the run after a break and to restore it on a new node if the one holding it dies; `maxRetries` (default 8)
   * attempts in a row, 200 ms doubling to 2 s apart.
   */
  constructor(options: {
    baseUrl: string;
    runId: string;
    token?: string;
    onAnswer?: (a: PublishAnswer) => void;
    restore?: boolean;
    restoreBufferBytes?: number;
    maxRetries?: number;
  });
  readonly runId: string;
  /** True once the server answered (before end(): a refusal or a stop). */
  readonly answered: boolean;
  /** True once the server answered 409 run_stopped: the run was stopped (DELETE); abort the agent. */
  readonly stopped: boolean;
  readonly answer: Promise<PublishAnswer>;
  /** Times the run was restored on a new node after the one holding it was lost (X-IQStream-Restore). */
  readonly restores: number;
  /** Sends the headers; the run exists (or is refused) once the server has read them. */
  open(): this;
  /** Writes one event; false once the request is over (ended, refused, stopped, cut). */
  send(event: object): boolean;
  /** Ends the body; resolves with the server's answer. */
  end(): Promise<PublishAnswer>;
  /** Cuts the connection (the run is then lost unless continued). */
  abort(): void;
}

/** Publishes a list of events as one request and resolves with the answer. */
export declare function publishEvents(options: { baseUrl: string; runId: string; token?: string }, events: object[]): Promise<PublishAnswer>;
