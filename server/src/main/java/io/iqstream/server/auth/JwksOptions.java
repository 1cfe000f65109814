package io.iqstream.server.auth;

import java.nio.file.Path;

/**
 * How a JWK Set given by {@code --jwks} is kept current: {@code timeoutMs} bounds one fetch and, at
 * start, the wait for a first usable set; fetches are at least {@code refreshMinMs} apart (a
 * {@code Cache-Control: max-age} below it, and early refreshes for unknown {@code kid}s, wait for
 * it; a file is checked this often) and at most {@code refreshMaxMs} (used when the key server
 * sends no max-age); {@code /readyz} answers 503 once the last good set is older than
 * {@code maxAgeMs}. {@code caPem}, for an https URL, replaces the JVM's trust store with the CA
 * certificates of that PEM file (null: the JVM's).
 *
 * <p>Immutable; any thread.
 */
public record JwksOptions(long timeoutMs, long refreshMinMs, long refreshMaxMs, long maxAgeMs, Path caPem) {

    /** The documented defaults: 10 s timeout, refresh every 15 s to 10 min, stale after 24 h, JVM trust. */
    public static final JwksOptions DEFAULTS = new JwksOptions(10_000, 15_000, 600_000, 24 * 3_600_000L, null);
}
