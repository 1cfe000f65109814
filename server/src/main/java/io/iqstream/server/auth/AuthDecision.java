package io.iqstream.server.auth;

/**
 * The outcome of an authorization check, mapped by the HTTP layer to a status.
 *
 * <p>Immutable; any thread.
 */
public enum AuthDecision {
    /** The request may go on. */
    ALLOWED,
    /** No token, or one that is malformed, unsigned, badly signed, expired or not yet valid: 401. */
    UNAUTHENTICATED,
    /** A valid token that does not grant the right on this run: 403, given before any 404. */
    FORBIDDEN
}
