// Types of @iqstream/resumable-stream: resumable-stream 2.2's, with IQ-Stream's options in place of Redis.

export interface CreateResumableStreamContextOptions {
  /**
   * The prefix of the IQ-Stream run ids the streams get (`<keyPrefix>:<streamId>`). Defaults to
   * `resumable-stream`. A run id is 1-128 characters of `A-Z a-z 0-9 . _ ~ : -`.
   */
  keyPrefix?: string;
  /**
   * A function that takes a promise and ensures that the current program stays alive until the promise is
   * resolved (Next.js `after`, Vercel `waitUntil`). On a long-running server pass null.
   */
  waitUntil: ((promise: Promise<unknown>) => void) | null;
  /** IQ-Stream's base URL, e.g. `http://127.0.0.1:8080`. Defaults to the environment variable `IQSTREAM_URL`. */
  url?: string;
  /**
   * A JWT with the publish and subscribe rights on `<keyPrefix>:*` (see docs/AI-SDK.md). Defaults to the
   * environment variable `IQSTREAM_TOKEN`; none: no Authorization header (a server started with `--auth none`).
   */
  token?: string;
  /**
   * How long IQ-Stream waits, once the producer's request is gone, before it ends the stream for its readers
   * with an `error` chunk (`X-IQStream-Publisher-Lease`). A producer that dies cannot come back, so this is short.
   * Milliseconds, default 2000.
   */
  publisherLeaseMs?: number;
  /**
   * `resumeExistingStream` and `resumableStream` replay a finished stream (for the server's `--retention`)
   * instead of returning null. Default false, as in resumable-stream.
   */
  replayFinished?: boolean;
  /**
   * The producer keeps every chunk frame it sent until the stream ends, at most this many bytes (default 8 MiB,
   * 0 = none kept): after a break it continues the run with `Last-Event-ID`, and when the IQ-Stream node holding
   * the run died it restores the run on its new owner with the same ids (docs/DEPLOY.md, "Restore: the
   * protocol"). Past the bound a break ends the publish (reported to `onError`).
   */
  restoreBufferBytes?: number;
  /**
   * How long the producer gathers the frames `makeStream` yields before it writes them to IQ-Stream as one chunk
   * of its request: the first frame after a pause goes at once, the next ones at most every `batchMs`. So a token
   * stream costs the app one write, and IQ-Stream one read, per batch instead of per token; a reader that resumed
   * (the producer's own response is not delayed) gets the tokens up to `batchMs` later, a batch at a time.
   * Milliseconds, default 0: what each read of `makeStream` yields is written at once (a producer killed mid-answer
   * then takes nothing its browser saw with it, which a batch would).
   */
  batchMs?: number;
  /** Attempts in a row, 200 ms doubling to 2 s apart, to continue a broken publish before it is given up. Default 8. */
  maxRetries?: number;
  /** Called with errors of the background publish (refused, or broken and not continued); default console.error. */
  onError?: (error: unknown) => void;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: typeof globalThis.fetch;
}

export interface ResumableStreamContext {
  /**
   * Creates or resumes a resumable stream.
   *
   * @param streamId - The ID of the stream. Must be unique for each stream.
   * @param makeStream - A function that returns a stream of strings. It's only executed if the stream is not yet
   * in progress.
   * @param skipCharacters - Number of characters to skip
   * @returns A readable stream of strings. Returns null if there was a stream with the given streamId but it is
   * already fully done.
   */
  resumableStream: (
    streamId: string,
    makeStream: () => ReadableStream<string>,
    skipCharacters?: number,
  ) => Promise<ReadableStream<string> | null>;
  /**
   * Resumes a stream that was previously created by `createNewResumableStream`, on any instance.
   *
   * @param streamId - The ID of the stream.
   * @param skipCharacters - Number of characters to skip
   * @returns A readable stream of strings: the producer's text from its first character (after skipCharacters).
   * null if the stream is already fully done (unless `replayFinished`), undefined if there is no stream with
   * the given streamId.
   */
  resumeExistingStream: (
    streamId: string,
    skipCharacters?: number,
  ) => Promise<ReadableStream<string> | null | undefined>;
  /**
   * Creates a new resumable stream: what `makeStream` yields is published to IQ-Stream as it comes (in batches of
   * `batchMs`).
   *
   * @param streamId - The ID of the stream. Must be unique for each stream.
   * @param makeStream - A function that returns a stream of strings (the AI SDK's SSE text).
   * @param skipCharacters - Accepted and ignored, as in resumable-stream.
   * @returns The same strings, for the producer's own response; resolves once IQ-Stream holds the stream, so an id
   * saved after it is resumable at once.
   */
  createNewResumableStream: (
    streamId: string,
    makeStream: () => ReadableStream<string>,
    skipCharacters?: number,
  ) => Promise<ReadableStream<string> | null>;
  /**
   * Checks if a stream with the given streamId exists.
   * @returns null if there is no stream with the given streamId. True if it exists. "DONE" if it is fully done.
   */
  hasExistingStream: (streamId: string) => Promise<null | true | "DONE">;
  /**
   * Stops a running stream, wherever it is produced: its `makeStream` source is cancelled and every reader's
   * stream ends with an `abort` chunk, then `[DONE]`.
   * @returns true when a running stream was stopped; false when it had already finished or does not exist.
   */
  stopStream: (streamId: string) => Promise<boolean>;
}

export declare function createResumableStreamContext(
  options: CreateResumableStreamContextOptions,
): ResumableStreamContext;
