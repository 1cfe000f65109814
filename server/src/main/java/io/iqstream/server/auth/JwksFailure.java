package io.iqstream.server.auth;

/**
 * Why a JWKS refresh failed; the label is the {@code reason} of
 * {@code iqstream_jwks_refresh_failures_total}. Immutable; any thread.
 */
enum JwksFailure {
    /** No answer within {@code --jwks-timeout} (connect, headers or body). */
    TIMEOUT("timeout"),
    /** Connection refused or reset, DNS, a read error; or the file could not be read. */
    IO("io"),
    /** The TLS handshake failed (an untrusted certificate: see {@code --jwks-ca}). */
    TLS("tls"),
    /** An HTTP status other than 200 (or 304 to a conditional request), a redirect aside. */
    HTTP_STATUS("http_status"),
    /** A 3xx redirect: never followed, since only the {@code --jwks} URL itself was checked. */
    REDIRECT("redirect"),
    /** A body over {@link JwksEndpoint#MAX_BODY_BYTES}. */
    TOO_LARGE("too_large"),
    /** Not JSON, or not a JWK Set. */
    BAD_JSON("bad_json"),
    /** A JWK Set in which no key can verify tokens. */
    NO_USABLE_KEY("no_usable_key");

    private final String label;

    JwksFailure(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }
}
