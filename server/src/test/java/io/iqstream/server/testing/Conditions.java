package io.iqstream.server.testing;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

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

    /**
     * Returns {@code reading} once it stops moving: {@code steadyReadings} readings in a row, {@code intervalMs}
     * apart, each within {@code within} of the one before (memory a server frees or trims a moment later); an
     * AssertionError naming {@code what} after {@code timeoutMs}.
     */
    public static long steady(String what, long timeoutMs, long intervalMs, int steadyReadings, long within,
            LongSupplier reading) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        long last = reading.getAsLong();
        int steady = 0;
        while (System.nanoTime() - deadline < 0) {
            Thread.sleep(intervalMs);
            long now = reading.getAsLong();
            steady = Math.abs(now - last) <= within ? steady + 1 : 0;
            last = now;
            if (steady >= steadyReadings) {
                return now;
            }
        }
        throw new AssertionError("not steady within " + timeoutMs + " ms: " + what + " (last " + last + ")");
    }
}
