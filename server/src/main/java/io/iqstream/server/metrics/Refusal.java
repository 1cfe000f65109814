package io.iqstream.server.metrics;

/** Why a request was refused; each has its own counter, labelled {@code reason}. */
public enum Refusal {
    BAD_REQUEST("bad_request"),
    UNAUTHENTICATED("unauthenticated"),
    FORBIDDEN("forbidden"),
    NOT_FOUND("not_found"),
    GONE("gone"),
    PUBLISHER_ACTIVE("publisher_active"),
    RUN_ENDED("run_ended"),
    EVENT_ID_MISMATCH("event_id_mismatch"),
    RUN_LOST("run_lost"),
    EVENT_TOO_LARGE("event_too_large"),
    RUN_TOO_LARGE("run_too_large"),
    UNSUPPORTED_MEDIA_TYPE("unsupported_media_type"),
    OVER_BUDGET("over_budget"),
    DRAINING("draining"),
    SLOW_SUBSCRIBER("slow_subscriber"),
    THREAD_FULL("thread_full"),
    LISTINGS_BUSY("listings_busy"),
    PEER_UNPROVEN("peer_unproven"),
    INTERNAL_ERROR("internal_error");

    private final String label;

    Refusal(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
