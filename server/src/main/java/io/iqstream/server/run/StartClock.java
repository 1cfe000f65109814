package io.iqstream.server.run;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * When a run started, as the thread listing orders runs: wall-clock epoch microseconds, strictly increasing across
 * the node's workers. Two runs started one after the other on one node are listed in that order even when they
 * start within one millisecond (a tie broken by run id would list them by name) or the wall clock steps back: a
 * stamp is never below the last one plus one. Thread-safe and lock-free; one compare-and-set per run started, never
 * per event.
 */
public final class StartClock {
    /** The node's clock, shared by its workers. */
    public static final StartClock NODE = new StartClock(StartClock::wallMicros);

    private final LongSupplier wall;
    private final AtomicLong last = new AtomicLong(Long.MIN_VALUE);

    StartClock(LongSupplier wallMicros) {
        this.wall = wallMicros;
    }

    /** A stamp above every stamp this clock gave before: the wall clock's microseconds, or the last one plus one. */
    public long nextMicros() {
        long now = wall.getAsLong();
        return last.accumulateAndGet(now, (prev, wallNow) -> Math.max(wallNow, prev + 1));
    }

    private static long wallMicros() {
        Instant t = Clock.systemUTC().instant();
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }
}
