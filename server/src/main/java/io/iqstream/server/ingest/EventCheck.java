package io.iqstream.server.ingest;

/** The verdict on one event's JSON. */
public enum EventCheck {
    OK,
    /** Valid, and a {@code RUN_FINISHED} or {@code RUN_ERROR}: it ends the run. */
    OK_TERMINAL,
    BAD_JSON,
    NOT_AN_OBJECT,
    MISSING_TYPE
}
