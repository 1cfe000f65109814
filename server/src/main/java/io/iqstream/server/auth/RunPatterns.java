package io.iqstream.server.auth;

import java.util.ArrayList;
import java.util.List;

/**
 * The run-id patterns one right grants: {@code "*"} (every run), a prefix ending in {@code '*'}
 * ({@code "thread-7:*"}) or an exact run id. A {@code '*'} anywhere but at the end is a literal
 * character, which no valid run id contains, so such a pattern matches nothing.
 *
 * <p>Immutable; any thread. {@link #matches(String)} does not allocate.
 */
final class RunPatterns {

    /** Grants nothing. */
    static final RunPatterns NONE = new RunPatterns(false, new String[0], new String[0]);

    private final boolean everyRun;
    private final String[] exactIds;
    /** Prefixes without their trailing {@code '*'}. */
    private final String[] prefixes;

    private RunPatterns(boolean everyRun, String[] exactIds, String[] prefixes) {
        this.everyRun = everyRun;
        this.exactIds = exactIds;
        this.prefixes = prefixes;
    }

    /**
     * Reads one pattern list of the {@code iqstream} claim. Anything but a JSON array of strings
     * (a bare string, a number, an array holding a non-string) grants nothing: a malformed
     * grant fails closed rather than being half-honoured.
     *
     * @return the patterns, or {@link #NONE} when the value is absent or malformed
     */
    static RunPatterns fromClaimValue(Object value) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            return NONE;
        }
        boolean everyRun = false;
        List<String> exact = new ArrayList<>();
        List<String> prefix = new ArrayList<>();
        for (Object element : list) {
            if (!(element instanceof String pattern)) {
                return NONE;
            }
            if (pattern.equals("*")) {
                everyRun = true;
            } else if (pattern.endsWith("*")) {
                prefix.add(pattern.substring(0, pattern.length() - 1));
            } else if (!pattern.isEmpty()) {
                exact.add(pattern);
            }
        }
        if (everyRun) {
            return new RunPatterns(true, new String[0], new String[0]);
        }
        return new RunPatterns(false, exact.toArray(new String[0]), prefix.toArray(new String[0]));
    }

    /** Whether {@code runId} (non-null, already validated) is granted. Does not allocate. */
    boolean matches(String runId) {
        if (everyRun) {
            return true;
        }
        for (String id : exactIds) {
            if (id.equals(runId)) {
                return true;
            }
        }
        for (String prefix : prefixes) {
            if (runId.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** Whether these patterns grant no run at all. */
    boolean isEmpty() {
        return !everyRun && exactIds.length == 0 && prefixes.length == 0;
    }
}
