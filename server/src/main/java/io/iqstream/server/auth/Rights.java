package io.iqstream.server.auth;

import java.util.Map;

/**
 * What one verified token grants, read from its {@code iqstream} claim:
 * {@code {"subscribe": ["run-42", "thread-7:*"], "publish": ["*"], "threads": ["thread-7"]}}.
 *
 * <p>A token without the claim, or with a claim that is not a JSON object, grants nothing; so
 * does a malformed pattern list (see {@link RunPatterns#fromClaimValue(Object)}). Such a token
 * is still authenticated: its requests are forbidden (403), not unauthenticated (401).
 *
 * <p>Immutable; any thread. The checks do not allocate.
 */
final class Rights {

    /** Name of the private claim that carries the rights. */
    static final String CLAIM = "iqstream";

    /** Grants nothing. */
    static final Rights NONE = new Rights(RunPatterns.NONE, RunPatterns.NONE, RunPatterns.NONE, null);

    private final RunPatterns publish;
    private final RunPatterns subscribe;
    /** Thread ids whose runs may be listed. */
    private final RunPatterns threads;
    /** The token's {@code sub} claim, or null: who holds it, for the shares of what is limited per caller. */
    private final String subject;

    private Rights(RunPatterns publish, RunPatterns subscribe, RunPatterns threads, String subject) {
        this.publish = publish;
        this.subscribe = subscribe;
        this.threads = threads;
        this.subject = subject;
    }

    /** Reads the value of the {@code iqstream} claim (null when the token has none); no subject. */
    static Rights fromClaim(Object claim) {
        return fromClaim(claim, null);
    }

    /** Reads the value of the {@code iqstream} claim (null when the token has none) and the {@code sub} claim. */
    static Rights fromClaim(Object claim, String subject) {
        if (!(claim instanceof Map<?, ?> map)) {
            return NONE;
        }
        RunPatterns publish = RunPatterns.fromClaimValue(map.get(Right.PUBLISH.claimKey()));
        RunPatterns subscribe = RunPatterns.fromClaimValue(map.get(Right.SUBSCRIBE.claimKey()));
        RunPatterns threads = RunPatterns.fromClaimValue(map.get(Right.THREADS.claimKey()));
        if (publish.isEmpty() && subscribe.isEmpty() && threads.isEmpty()) {
            return NONE;
        }
        return new Rights(publish, subscribe, threads, subject);
    }

    /** Whether {@code right} is granted on {@code id} (a run id; a thread id for {@link Right#THREADS}). */
    boolean allows(String id, Right right) {
        // comparisons, not an enum switch: no switch-map class on this allocation-free path
        RunPatterns patterns = right == Right.PUBLISH ? publish : right == Right.SUBSCRIBE ? subscribe : threads;
        return patterns.matches(id);
    }

    /** The token's {@code sub} claim, or null when it has none. */
    String subject() {
        return subject;
    }

    /** Whether either right is granted on {@code runId}. */
    boolean allowsEither(String runId) {
        return publish.matches(runId) || subscribe.matches(runId);
    }
}
