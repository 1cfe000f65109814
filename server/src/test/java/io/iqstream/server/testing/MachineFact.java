package io.iqstream.server.testing;

import java.util.function.Supplier;
import org.opentest4j.TestAbortedException;

/**
 * The one way a test skips itself: it names the fact about this machine that it needs ({@code epoll},
 * {@code io_uring}, ...) and says why the fact does not hold. Under {@code CI=true} such a skip fails the test
 * unless the runner declares that fact missing in {@code IQSTREAM_TEST_SKIPPABLE} (a comma list, shared with
 * the suites of scripts/test-all.sh); {@link SkipCheckExtension} enforces it, and fails any other skip under
 * CI.
 */
public final class MachineFact {
    /** How an abort names its fact: "machine fact NAME: why". */
    static final String PREFIX = "machine fact ";

    private MachineFact() {}

    /** Skips the test (a JUnit abort naming {@code fact}) unless {@code holds}. */
    public static void assume(String fact, boolean holds, Supplier<String> why) {
        if (!holds) {
            throw new TestAbortedException(PREFIX + fact + ": " + why.get());
        }
    }

    /** Skips the test (a JUnit abort naming {@code fact}) unless {@code holds}. */
    public static void assume(String fact, boolean holds, String why) {
        assume(fact, holds, () -> why);
    }
}
