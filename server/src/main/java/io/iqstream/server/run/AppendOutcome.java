package io.iqstream.server.run;

/** What became of one event offered to a run. Expected outcomes on the hot path, not exceptions. */
public enum AppendOutcome {
    /** Stored and announced to subscribers. */
    APPENDED,
    /** Stored; it was {@code RUN_FINISHED} or {@code RUN_ERROR}, so the run is now ended. */
    APPENDED_TERMINAL,
    /** The run had already ended: 409. */
    RUN_ENDED,
    /** Storing it would pass {@code --max-run-bytes}: 413. */
    RUN_TOO_LARGE,
    /** A RUN_STARTED of a thread that already holds {@link ThreadIndex#MAX_RUNS_PER_THREAD} runs here: 409. */
    THREAD_FULL,
    /** The memory budget cannot hold it: 503. */
    OVER_BUDGET
}
