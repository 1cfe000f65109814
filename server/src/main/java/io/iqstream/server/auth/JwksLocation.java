package io.iqstream.server.auth;

/**
 * Where a JWK Set is read from: an HTTPS URL ({@link JwksEndpoint}) or a file
 * ({@link JwksFileSource}). Called only from the refresh thread of {@link JwksRefresher}; a fetch
 * may block (up to {@code --jwks-timeout}), never on an event loop.
 */
interface JwksLocation extends AutoCloseable {

    /**
     * Reads the set, conditionally when {@code etag} is not null.
     *
     * @param etag the validator of the set in use, or null to read it whole
     */
    JwksFetch fetch(String etag);

    /** The URL or path, for logs and messages. */
    String describe();

    @Override
    void close();
}
