package io.iqstream.server.auth;

/**
 * Why a token was not accepted, with the text the 401 answer carries. The text says what the client
 * can do about it and never echoes the token.
 *
 * <p>Immutable; any thread.
 */
enum TokenRefusal {
    /** The request presents no token (a cookie from a foreign origin does not count). */
    MISSING("a token is required (Authorization: Bearer, ?access_token= or the iqstream_token cookie)"),
    /** Malformed, unsigned, badly signed, expired, not yet valid, wrong iss/aud, wrong algorithm. */
    INVALID("the token is not valid"),
    /** Signed and otherwise valid, but with no {@code exp} claim, which the server requires. */
    EXP_REQUIRED("the token has no exp claim and exp is required: give every token an expiry"
            + " (or start the server with --allow-tokens-without-exp)"),
    /** Its {@code kid} names no key of the current key set; a refresh of the set may have been asked for. */
    UNKNOWN_KEY("the token's kid names no key of the server's key set; if the key is new, retry in a moment"),
    /** The server has not loaded a key set yet (a JWKS URL still being fetched at start). */
    NO_KEYS("the server has not loaded its signing keys yet; retry in a moment");

    private final String message;

    TokenRefusal(String message) {
        this.message = message;
    }

    /** The message of the 401 answer. */
    String message() {
        return message;
    }
}
