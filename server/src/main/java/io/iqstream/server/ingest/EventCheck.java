package io.iqstream.server.ingest;

/** The verdict on one event's JSON. */
public enum EventCheck {
    OK,
    /** Valid, and a type that ends the run (AG-UI: {@code RUN_FINISHED} or {@code RUN_ERROR}). */
    OK_TERMINAL,
    /** Valid, and a type that ends the run if the publishing body ends right after it (UI stream: {@code finish}). */
    OK_CLOSING,
    /** The run's protocol's end marker ({@code [DONE]}): no event, it ends the run. */
    END_MARKER,
    BAD_JSON,
    NOT_AN_OBJECT,
    MISSING_TYPE,
    /** The bytes are not well-formed UTF-8. */
    BAD_UTF8,
    /** The object has {@code type} more than once. */
    DUPLICATE_TYPE
}
