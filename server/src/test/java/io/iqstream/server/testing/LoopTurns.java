package io.iqstream.server.testing;

import io.netty.channel.EventLoop;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What a worker loop did turn by turn, read on the loop itself: a task scheduled with no delay runs once per loop
 * turn, after that turn's I/O (the same mechanism the server's catch-up turns use), and reads a counter (events
 * appended, bytes written). The largest step between two readings is what one turn did at most: a figure that
 * counts work, so a slow or busy machine changes how many turns there are, never what one turn may do. Used where
 * a test once bounded a latency in milliseconds.
 *
 * <p>Its fields are confined to the loop while it runs; {@link #close} waits for its last reading.
 */
public final class LoopTurns implements AutoCloseable {
    private final EventLoop loop;
    private final LongSupplier counter;
    private final Runnable tick = this::tick;
    private volatile boolean stopped;
    private long last;
    private long turns;
    private long busyTurns;
    private long most;

    private LoopTurns(EventLoop loop, LongSupplier counter) {
        this.loop = loop;
        this.counter = counter;
    }

    /** Starts reading {@code counter} once per turn of {@code loop}. */
    public static LoopTurns watch(EventLoop loop, LongSupplier counter) throws Exception {
        LoopTurns turns = new LoopTurns(loop, counter);
        loop.submit(() -> {
            turns.last = counter.getAsLong();
            loop.schedule(turns.tick, 0, TimeUnit.NANOSECONDS);
        }).get(10, TimeUnit.SECONDS);
        return turns;
    }

    private void tick() {
        long now = counter.getAsLong();
        long step = now - last;
        last = now;
        turns++;
        if (step > 0) {
            busyTurns++;
        }
        most = Math.max(most, step);
        if (!stopped) {
            loop.schedule(tick, 0, TimeUnit.NANOSECONDS);
        }
    }

    /** The figures so far, read on the loop: turns, turns in which the counter moved, the largest step. */
    public Figures figures() throws Exception {
        return loop.submit(() -> new Figures(turns, busyTurns, most)).get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        stopped = true;
        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
    }

    /** Turns seen, turns in which the counter moved, and the most it moved in one turn. */
    public record Figures(long turns, long busyTurns, long mostPerTurn) {
        @Override
        public String toString() {
            return mostPerTurn + " at most in one turn, over " + turns + " turns (" + busyTurns + " moved it)";
        }
    }
}
