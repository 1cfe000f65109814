package io.iqstream.server.auth;

/**
 * The outcome of one fetch of a JWK Set: a body (with its validator and how long it may be kept),
 * "not modified" for a conditional request, or a failure with its reason.
 *
 * @param body the set's text ({@link Kind#FETCHED} only)
 * @param etag the validator to send next time as {@code If-None-Match}, or null
 * @param maxAgeMs how long the answer may be kept ({@code Cache-Control: max-age}), or -1 when not said
 * @param failure why it failed ({@link Kind#FAILED} only)
 * @param detail a line for the log ({@link Kind#FAILED} only)
 */
record JwksFetch(Kind kind, String body, String etag, long maxAgeMs, JwksFailure failure, String detail) {

    enum Kind { FETCHED, NOT_MODIFIED, FAILED }

    static JwksFetch fetched(String body, String etag, long maxAgeMs) {
        return new JwksFetch(Kind.FETCHED, body, etag, maxAgeMs, null, null);
    }

    static JwksFetch notModified(String etag, long maxAgeMs) {
        return new JwksFetch(Kind.NOT_MODIFIED, null, etag, maxAgeMs, null, null);
    }

    static JwksFetch failed(JwksFailure failure, String detail) {
        return new JwksFetch(Kind.FAILED, null, null, -1, failure, detail);
    }
}
