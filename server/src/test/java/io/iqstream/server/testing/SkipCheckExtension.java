package io.iqstream.server.testing;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.TestAbortedException;

/**
 * Under {@code CI=true} a test that skips itself fails, as a suite that skips itself fails scripts/test-all.sh,
 * unless the skip names the machine fact it needs ({@link MachineFact}) and {@code IQSTREAM_TEST_SKIPPABLE}
 * declares that fact: a skip that passes silently is a test that never ran. Elsewhere a skip stays a skip.
 * Registered for every test class by autodetection (META-INF/services); it sees aborts from test methods and from
 * their before/after methods. JUnit's disabling annotations are not used in this suite ({@code SkippedTestsTest} keeps it so).
 */
public final class SkipCheckExtension implements TestExecutionExceptionHandler,
        LifecycleMethodExecutionExceptionHandler {
    private final boolean strict;
    private final Set<String> skippable;

    public SkipCheckExtension() {
        this(System.getenv());
    }

    SkipCheckExtension(Map<String, String> env) {
        strict = "true".equals(env.get("CI"));
        skippable = Arrays.stream(env.getOrDefault("IQSTREAM_TEST_SKIPPABLE", "").split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
    }

    /** {@code thrown} as it should reach JUnit: an abort this machine may not take becomes a failure. */
    Throwable judge(Throwable thrown) {
        if (!strict || !(thrown instanceof TestAbortedException)) {
            return thrown;
        }
        String message = String.valueOf(thrown.getMessage());
        String fact = null;
        if (message.startsWith("Assumption failed: ")) {
            message = message.substring("Assumption failed: ".length());
        }
        if (message.startsWith(MachineFact.PREFIX) && message.indexOf(':', MachineFact.PREFIX.length()) > 0) {
            fact = message.substring(MachineFact.PREFIX.length(), message.indexOf(':', MachineFact.PREFIX.length()));
        }
        if (fact != null && skippable.contains(fact)) {
            return thrown;
        }
        AssertionError failure = new AssertionError("skipped under CI=true (" + thrown.getMessage() + "): "
                + (fact == null ? "a skip must name the machine fact it needs (MachineFact.assume)"
                        : "IQSTREAM_TEST_SKIPPABLE does not declare '" + fact + "' on this machine"));
        failure.initCause(thrown);
        return failure;
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        throw judge(thrown);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable thrown)
            throws Throwable {
        throw judge(thrown);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable thrown)
            throws Throwable {
        throw judge(thrown);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable thrown)
            throws Throwable {
        throw judge(thrown);
    }

    @Override
    public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable thrown)
            throws Throwable {
        throw judge(thrown);
    }
}
