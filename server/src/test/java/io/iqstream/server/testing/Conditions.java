package io.iqstream.server.testing;

import java.util.function.BooleanSupplier;

/**
 * Waiting on a condition instead of a {@code Thread.sleep} guess: polls {@code condition} every few ms until it
 * holds, and fails the test, naming what it waited for, if it does not within {@code timeoutMs} (a generous
 * bound for a stuck server, never a speed claim).
 */
public final class Conditions {
    private Conditions() {}

    /** Returns as soon as {@code condition} holds; an AssertionError naming {@code what} after {@code timeoutMs}. */
    public static void await(String what, long timeoutMs, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + timeoutMs + " ms: " + what);
            }
            Thread.sleep(5);
        }
    }
}
