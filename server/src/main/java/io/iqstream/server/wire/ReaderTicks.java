package io.iqstream.server.wire;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The timers of one worker loop's live readers (keep-alives, the lag cut, an SSE response's lifetime, a long-poll's
 * timeout): one sweep per loop instead of a scheduled task per reader. Each reader is a slot here (the reader keeps
 * its index, so joining and leaving are O(1), swapping the last slot into the one freed) with the time its next
 * tick is due; the sweep runs every {@link #granularityMs} and ticks each reader whose time has come, which answers
 * when it wants the next one. The granularity is the shortest period any reader asked for, at most
 * {@value #MAX_GRANULARITY_MS} ms, so a tick is at most that late: a keep-alive or a long-poll's answer goes out
 * within it of its time. An idle reader costs a slot (12 bytes) instead of a timer task and its closure; the sweep
 * runs only while the loop has readers.
 *
 * <p>One per loop thread (a {@link FastThreadLocal}, as {@link CatchUpTurns}); confined to it. A reader keeps a
 * reference to the one it joined (a test's channels on one thread may each have a loop of their own).
 */
public final class ReaderTicks {
    /** A reader with a tick. */
    public interface Ticked {
        /** Its tick, at or after its due time ({@code nowNanos}); returns the next due time, or 0 to leave. */
        long tick(long nowNanos);

        /** Its slot here, -1 when it has none; kept by the reader for O(1) removal. */
        int tickSlot();

        void tickSlot(int slot);
    }

    /** The sweep's longest period: how late a tick may be at most. */
    static final long MAX_GRANULARITY_MS = 1000;
    private static final FastThreadLocal<ReaderTicks> PER_LOOP = new FastThreadLocal<>();

    private final EventExecutor loop;
    private final Runnable sweep = this::sweep;
    private Ticked[] readers = new Ticked[16];
    private long[] dueNanos = new long[16];
    private int size;
    private long granularityMs = MAX_GRANULARITY_MS;
    private boolean scheduled;

    private ReaderTicks(EventExecutor loop) {
        this.loop = loop;
    }

    /** The ticks of the loop running this thread, {@code loop}. */
    public static ReaderTicks of(EventExecutor loop) {
        ReaderTicks ticks = PER_LOOP.get();
        if (ticks == null || ticks.loop != loop) {
            ticks = new ReaderTicks(loop);
            PER_LOOP.set(ticks);
        }
        return ticks;
    }

    /** Adds {@code r} (without a slot), first due at {@code dueNanos}, ticking about every {@code periodMs}. */
    public void add(Ticked r, long dueNanos, long periodMs) {
        if (size == readers.length) {
            readers = Arrays.copyOf(readers, size * 2);
            this.dueNanos = Arrays.copyOf(this.dueNanos, size * 2);
        }
        readers[size] = r;
        this.dueNanos[size] = dueNanos;
        r.tickSlot(size++);
        granularityMs = Math.max(1, Math.min(granularityMs, periodMs));
        if (!scheduled) {
            scheduled = true;
            loop.schedule(sweep, granularityMs, TimeUnit.MILLISECONDS);
        }
    }

    /** Its next tick is due at {@code dueNanos} instead. */
    public void due(Ticked r, long dueNanos) {
        int slot = r.tickSlot();
        if (slot >= 0 && slot < size && readers[slot] == r) {
            this.dueNanos[slot] = dueNanos;
        }
    }

    /** Removes {@code r}; nothing when it has no slot. */
    public void remove(Ticked r) {
        int slot = r.tickSlot();
        if (slot >= 0 && slot < size && readers[slot] == r) {
            removeAt(slot);
        }
        r.tickSlot(-1);
    }

    /** Readers with a slot now (for tests). */
    int size() {
        return size;
    }

    private void removeAt(int slot) {
        Ticked gone = readers[slot];
        int last = --size;
        if (slot != last) {
            readers[slot] = readers[last];
            dueNanos[slot] = dueNanos[last];
            readers[slot].tickSlot(slot);
        }
        readers[last] = null;
        gone.tickSlot(-1);
        if (size == 0 && readers.length > 1024) {
            // a crowd came and went: the slots go back to their first size
            readers = new Ticked[16];
            dueNanos = new long[16];
        }
    }

    private void sweep() {
        scheduled = false;
        long now = System.nanoTime();
        int i = 0;
        while (i < size) {
            Ticked r = readers[i];
            if (dueNanos[i] - now > 0) {
                i++;
                continue;
            }
            long next = r.tick(now);
            if (i < size && readers[i] == r) {
                if (next == 0) {
                    removeAt(i);
                } else {
                    dueNanos[i++] = next;
                }
            }
            // else it left during its tick: slot i now holds the one swapped in, not yet visited
        }
        if (size > 0) {
            scheduled = true;
            loop.schedule(sweep, granularityMs, TimeUnit.MILLISECONDS);
        } else {
            granularityMs = MAX_GRANULARITY_MS;
        }
    }
}
