// Type declarations for @iqstream/tanstack-ai (hand-written; the sources carry JSDoc too).
import type { UpsertableStreamDurability } from "@tanstack/ai";

/** An offset: `iq1:<IQ-Stream run id>:<event id, 10 digits>`. */
export type IqStreamOffset = string;

/** `memoryStream`'s explicit form: the run, and the offset a consumer resumes after (default null: a producer). */
export interface IqStreamInit {
  runId: string;
  offset?: string | null;
}

export interface IqStreamOptions {
  /** IQ-Stream's base URL. Default: `IQSTREAM_URL`. */
  url?: string;
  /**
   * A JWT with `publish` and `subscribe` on `<prefix>*` (and an `exp`), or a function asked before every request
   * (to refresh it). Default: `IQSTREAM_TOKEN`.
   */
  token?: string | (() => string | Promise<string>);
  /** IQ-Stream run ids of TanStack runs start with it. Default `tsa.`. */
  prefix?: string;
  /**
   * Publisher lease in ms (`X-IQStream-Publisher-Lease`): IQ-Stream ends the run with `RUN_ERROR`
   * `PUBLISHER_LOST` once the producer has had no request open for this long; while the run is open and idle the
   * adapter sends an empty continuation every third of it. 0: no lease. Default `IQSTREAM_PUBLISHER_LEASE_MS`,
   * else 5000.
   */
  leaseMs?: number;
  /** The longest pause between batches the keep-alive covers (default 300000); then the lease ends the run. */
  maxPauseMs?: number;
  fetch?: typeof fetch;
}

export interface IqStreamDurability extends UpsertableStreamDurability<IqStreamOffset> {
  /** The IQ-Stream run this adapter writes and reads. */
  readonly iqRunId: string;
}

/**
 * TanStack AI's delivery durability kept in IQ-Stream; takes `memoryStream`'s arguments:
 * `toServerSentEventsResponse(stream, { durability: { adapter: iqstreamStream(request) } })`.
 */
export declare function iqstreamStream(source: Request | IqStreamInit, options?: IqStreamOptions): IqStreamDurability;

/** The IQ-Stream run id of a TanStack run id: `<prefix><runId>`, or `<prefix>~<sha-256>` when that is not valid. */
export declare function iqRunIdOf(runId: string, prefix?: string): string;

/** A refused or failed call to IQ-Stream. */
export declare class IqStreamDurabilityError extends Error {
  readonly status?: number;
  /** IQ-Stream's error code: `event_id_mismatch`, `run_ended`, `forbidden`, ... */
  readonly code?: string;
  readonly runId?: string;
  readonly lastEventId?: number;
}
