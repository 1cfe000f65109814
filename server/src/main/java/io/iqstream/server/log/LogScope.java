package io.iqstream.server.log;

/**
 * What a log line written now says of the request being served on this thread: its run id and stream path
 * ({@code --log-format json}). Set by the connection's request scope around each read and write it passes on, and
 * cleared after; a line written outside (a timer, the start-up) names none. Thread-confined (a thread-local).
 */
public final class LogScope {
    private static final ThreadLocal<LogScope> CURRENT = new ThreadLocal<>();

    private final String runId;
    private final String streamPath;

    private LogScope(String runId, String streamPath) {
        this.runId = runId;
        this.streamPath = streamPath;
    }

    /** Makes {@code runId} / {@code streamPath} (either may be null) this thread's scope; returns the one before. */
    public static LogScope enter(String runId, String streamPath) {
        LogScope before = CURRENT.get();
        CURRENT.set(runId == null && streamPath == null ? null : new LogScope(runId, streamPath));
        return before;
    }

    /** Puts back the scope {@link #enter} returned. */
    public static void restore(LogScope before) {
        CURRENT.set(before);
    }

    /** This thread's scope now, or null. */
    public static LogScope current() {
        return CURRENT.get();
    }

    public String runId() {
        return runId;
    }

    public String streamPath() {
        return streamPath;
    }
}
