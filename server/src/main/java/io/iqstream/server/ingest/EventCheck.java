package io.iqstream.server.ingest;

/** The verdict on one event's JSON. */
public enum EventCheck {
    OK,
    /** Valid, and a {@code RUN_FINISHED} or {@code RUN_ERROR}: it ends the run. */
    OK_TERMINAL,
    BAD_JSON,
    NOT_AN_OBJECT,
    MISSING_TYPE,
    /** The bytes are not well-formed UTF-8. */
    BAD_UTF8,
    /** The object has {@code type} more than once. */
    DUPLICATE_TYPE
}
