package io.iqstream.server.run;

import java.util.concurrent.atomic.LongAdder;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.Metrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The runs owned by one worker, with their lifecycle: creation (admission), appends (caps, budget), the end,
 * retention, tombstones, and the server-made ends (publisher lost, idle, stopped) in each run's protocol.
 *
 * <p>Confined to its worker's event loop: every method must be called on {@link #loop()}.
 *
 * <h2>Implementation notes</h2>
 * Budget accounting: each run is charged its reservation at admission, and before every append the excess of
 * {@link RunLog#heldBytesAfterAppend} over what it is charged (a new segment, a new index page); packing gives
 * back down to the larger of what the log holds and the reservation. At the end the charge becomes exactly what the
 * sealed log holds; at the drop it is all given back. Shared unpacked copies ({@link SegmentCopies}) and tombstones
 * are charged by their own classes. So {@code budget.committedBytes()} is the sum of runs' charges, live copies
 * and tombstones, and every one of those bytes exists.
 */
public final class RunRegistry {
    private final EventLoop loop;
    private final ServerConfig config;
    private final MemoryBudget budget;
    private final Metrics metrics;
    private final ByteBufAllocator allocator;
    private final HashMap<String, Run> runs = new HashMap<>();
    private final HashMap<String, ArrayList<RunWaiter>> waiters = new HashMap<>();
    private final Tombstones tombstones;
    private final SegmentCodec codec;
    private final SegmentCopies copies;
    private final ThreadIndex threads;
    private ScheduledFuture<?> sweeper;
    /** Set by {@link #dropAll}: the server is closing. */
    private boolean closed;

    /** How often idle unpacked copies are freed and expired tombstones forgotten. */
    static final long SWEEP_INTERVAL_MS = 200;
    /**
     * How often the worker's own cache of freed pooled buffers is trimmed (Netty's
     * {@link PooledByteBufAllocator#trimCurrentThreadCache}: what was not reused since the last trim goes back to
     * the pool). Without it each worker kept up to 256 freed buffers per small size class for good — after 200 runs
     * had streamed at once, the 8 KiB segments and copies their ends freed: 33 KB of pool pages per ended run
     * against 15 KB charged ({@code RunInFlightFootprintTest}).
     */
    static final long CACHE_TRIM_INTERVAL_MS = 1_000;
    private long sweptMs;

    public RunRegistry(EventLoop loop, ServerConfig config, MemoryBudget budget, Metrics metrics,
            ByteBufAllocator allocator) {
        this.loop = loop;
        this.config = config;
        this.budget = budget;
        this.metrics = metrics;
        this.allocator = allocator;
        this.tombstones = new Tombstones(config.tombstoneMs(), budget, metrics.tombstonesEvicted);
        this.codec = config.compressLog() ? new SegmentCodec(allocator) : null;
        this.copies = codec != null ? new SegmentCopies(budget) : null;
        this.threads = new ThreadIndex(budget);
        this.sweeper = loop.scheduleAtFixedRate(this::sweep, SWEEP_INTERVAL_MS, SWEEP_INTERVAL_MS,
                TimeUnit.MILLISECONDS);
    }

    /** Frees unpacked copies no reader holds, forgets expired tombstones, and trims the pool cache each second. */
    private void sweep() {
        long now = System.nanoTime();
        if (copies != null) {
            copies.sweep(now);
        }
        tombstones.purge(now, 1024);
        sweptMs += SWEEP_INTERVAL_MS;
        if (sweptMs >= CACHE_TRIM_INTERVAL_MS && allocator instanceof PooledByteBufAllocator pooled) {
            sweptMs = 0;
            pooled.trimCurrentThreadCache();
        }
    }

    /** Memory is short: frees every idle unpacked copy, lingering ones too. True when that gave bytes back. */
    private boolean freeIdleCopies() {
        return copies != null && copies.sweep() > 0;
    }

    /** The shared unpacked copies of this worker's packed segments (null when the log is not packed). */
    public SegmentCopies copies() {
        return copies;
    }

    /** This worker's runs by thread ({@code GET /v1/threads/{threadId}/runs}). */
    public ThreadIndex threads() {
        return threads;
    }

    public EventLoop loop() {
        return loop;
    }

    public Run get(String runId) {
        return runs.get(runId);
    }

    /** True when the id belonged to a run whose retention has passed (410 Gone). */
    public boolean isGone(String runId) {
        return tombstones.contains(runId, System.nanoTime());
    }

    /** Runs held (open or within retention). */
    public int size() {
        return runs.size();
    }

    /** Runs not yet ended, for draining. */
    public int openRuns() {
        int n = 0;
        for (Run r : runs.values()) {
            if (!r.isEnded()) {
                n++;
            }
        }
        return n;
    }

    /**
     * Creates a run if the budget admits one; null when it does not (503), and always after {@link #dropAll} (the
     * server is closing: a request still arriving on a kept-alive connection must not make a run nothing frees).
     */
    public Run create(String runId) {
        return create(runId, RunProtocol.AG_UI);
    }

    /** {@link #create(String)} for a run in {@code protocol}, fixed for its life. */
    public Run create(String runId, RunProtocol protocol) {
        return create(runId, protocol, 0);
    }

    /**
     * {@link #create(String, RunProtocol)} for a run its publisher restores ({@code X-IQStream-Restore}) with its
     * first {@code restoreToId} events: set before any waiting reader hears of the run, so a reader that resumes
     * within them waits for them.
     */
    public Run create(String runId, RunProtocol protocol, long restoreToId) {
        if (closed) {
            return null;
        }
        long reserved = budget.tryAdmitRun();
        if (reserved < 0 && freeIdleCopies()) {
            reserved = budget.tryAdmitRun();
        }
        if (reserved < 0) {
            return null;
        }
        tombstones.remove(runId);
        Run run = new Run(runId, protocol, allocator, codec, copies, System.nanoTime());
        run.reservedBytes(reserved);
        run.chargedBytes(reserved);
        run.restoreToId(restoreToId);
        runs.put(runId, run);
        metrics.runsCreated.increment();
        metrics.runsActive.increment();
        ArrayList<RunWaiter> ws = waiters.remove(runId);
        if (ws != null) {
            for (RunWaiter w : ws) {
                w.runCreated(run);
            }
        }
        return run;
    }

    public void await(String runId, RunWaiter waiter) {
        waiters.computeIfAbsent(runId, k -> new ArrayList<>(1)).add(waiter);
    }

    /** Draining: every subscriber still waiting for a run is told no run will come, and forgotten. */
    public void endAwaiting() {
        ArrayList<RunWaiter> all = new ArrayList<>();
        waiters.values().forEach(all::addAll);
        waiters.clear();
        all.forEach(RunWaiter::serverDraining);
    }

    /** True while a subscriber waits (await-run) for {@code runId} to be created. For tests: on this loop only. */
    public boolean isAwaited(String runId) {
        return waiters.containsKey(runId);
    }

    public void stopAwaiting(String runId, RunWaiter waiter) {
        List<RunWaiter> ws = waiters.get(runId);
        if (ws != null) {
            ws.remove(waiter);
            if (ws.isEmpty()) {
                waiters.remove(runId);
            }
        }
    }

    /**
     * Appends one event's JSON to {@code run}: checks the run's state and caps, charges the budget for a new
     * segment, stores the frame once and tells the readers. Terminal events end the run and start retention.
     */
    public AppendOutcome append(Run run, ByteBuf json, boolean terminal) {
        if (run.isEnded()) {
            return AppendOutcome.RUN_ENDED;
        }
        RunLog log = run.log();
        int frameLength = log.frameLength(json.readableBytes());
        if (log.frameBytes() + frameLength > config.maxRunBytes()) {
            return AppendOutcome.RUN_TOO_LARGE;
        }
        long heldAfter = log.heldBytesAfterAppend(frameLength);
        long more = heldAfter - run.chargedBytes();
        if (more > 0) {
            if (!budget.charge(more, heldAfter) && !(freeIdleCopies() && budget.charge(more, heldAfter))) {
                return AppendOutcome.OVER_BUDGET;
            }
            run.chargedBytes(heldAfter);
        }
        // a run's first event, when a RUN_STARTED with a threadId, puts the run in its thread's index
        String threadId = run.lastEventId() == 0 ? ThreadIndex.threadIdOfRunStarted(json) : null;
        if (threadId != null && threads.isFull(threadId)) {
            return AppendOutcome.THREAD_FULL;
        }
        if (threadId != null && !threads.charge(threadId, heldAfter)) {
            return AppendOutcome.OVER_BUDGET;
        }
        run.store(json, frameLength, terminal, System.nanoTime());
        if (threadId != null) {
            threads.add(threadId, run, StartClock.NODE.nextMicros());
        }
        log.takeFreedBytes();
        long floor = Math.max(log.heldBytes(), run.reservedBytes());
        if (run.chargedBytes() > floor) {
            budget.release(run.chargedBytes() - floor);
            run.chargedBytes(floor);
        }
        metrics.eventsIn.increment();
        metrics.bytesIn.add(json.readableBytes());
        if (terminal) {
            onEnded(run);
            return AppendOutcome.APPENDED_TERMINAL;
        }
        return AppendOutcome.APPENDED;
    }

    /**
     * Ends an open run with the server-made end of its protocol ({@link RunProtocol#serverEndEvent}: AG-UI's
     * RUN_ERROR with {@code code}, the UI message stream's {@code error} or {@code abort} chunk): publisher lost,
     * idle, stopped. {@code message} is a constant with nothing JSON must escape.
     */
    public void endWithError(Run run, String code, String message) {
        if (run.isEnded()) {
            return;
        }
        String json = run.protocol().serverEndEvent(code, message, System.currentTimeMillis());
        ByteBuf buf = Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.UTF_8));
        AppendOutcome outcome = append(run, buf, true);
        if (outcome != AppendOutcome.APPENDED_TERMINAL) {
            // the log cannot take even this small event: end the run without it
            run.markEndedWithoutEvent();
            onEnded(run);
        }
        run.flushReaders();
    }

    /**
     * Ends an open run with no event of its own: its protocol's end marker came ({@code [DONE]}), or its
     * publishing body ended right after a closing event ({@link RunProtocol#closingTypes()}).
     */
    public void endWithoutEvent(Run run) {
        if (run.isEnded()) {
            return;
        }
        run.markEndedWithoutEvent();
        onEnded(run);
    }

    /**
     * Stops an open run now ({@code DELETE} of a running run): appends its protocol's stop (AG-UI: {@code RUN_ERROR} with code {@code STOPPED}; UI message stream: {@code abort})
     * and ends it; it stays readable for {@code --retention} like any ended run. The caller answers the publishing
     * request, if one is attached. Does nothing to an ended run.
     */
    public void stop(Run run) {
        if (run.isEnded()) {
            return;
        }
        metrics.runsStopped.increment();
        endWithError(run, RunProtocol.STOPPED, "run stopped");
    }

    private void onEnded(Run run) {
        run.endedAt(System.currentTimeMillis());
        metrics.runsEnded.increment();
        budget.learnRunSize(run.log().heldBytes());
        run.log().seal();
        // from here the run costs exactly what its sealed log holds (never more than it was charged)
        long held = run.log().heldBytes();
        budget.release(run.chargedBytes() - held);
        run.chargedBytes(held);
        run.reservedBytes(0);
        run.timer(loop.schedule(() -> drop(run), config.retentionMs(), TimeUnit.MILLISECONDS));
    }

    /**
     * A publishing request broke off: unless another arrives in time (the run's publisher lease, else
     * {@code --publisher-timeout}), the run ends with PUBLISHER_LOST.
     */
    public void publisherLost(Run run) {
        long leaseMs = run.publisherLeaseMs();
        endUnlessPublished(run, leaseMs >= 0 ? leaseMs : config.publisherTimeoutMs(), metrics.publishersLost,
                "PUBLISHER_LOST", "publisher disconnected");
    }

    /**
     * A publishing request ended cleanly with the run still open: the idle clock starts, or, when the publisher
     * holds a lease, the lease's clock (a producer that dies between two requests is then told from a pause).
     */
    public void publisherDone(Run run) {
        long leaseMs = run.publisherLeaseMs();
        if (leaseMs >= 0) {
            endUnlessPublished(run, leaseMs, metrics.publishersLost, "PUBLISHER_LOST",
                    "publisher lost: no publishing request within its lease of " + leaseMs + " ms");
        } else {
            endUnlessPublished(run, config.runIdleTimeoutMs(), metrics.runsIdled, "RUN_IDLE",
                    "run idle: no publisher and no event");
        }
    }

    /** Ends {@code run} with its protocol's server-made end {@code code} after {@code delayMs} unless a publisher attaches first. */
    private void endUnlessPublished(Run run, long delayMs, LongAdder counter,
            String code, String message) {
        if (run.isEnded()) {
            return;
        }
        run.timer(loop.schedule(() -> {
            if (run.publisher() == null && !run.isEnded() && runs.get(run.id()) == run) {
                counter.increment();
                endWithError(run, code, message);
            }
        }, delayMs, TimeUnit.MILLISECONDS));
    }

    /** A publisher attached: whatever timer ran is moot. */
    public void publisherAttached(Run run) {
        run.timer(null);
    }

    /** Drops a run now (DELETE, or retention passed): frees its log, tombstones its id, ends its streams. */
    public void drop(Run run) {
        if (runs.get(run.id()) != run) {
            return;
        }
        runs.remove(run.id());
        threads.remove(run);
        tombstones.add(run.id(), System.nanoTime());
        if (!run.isEnded()) {
            metrics.runsEnded.increment();
        }
        run.markDropped();
        run.log().release();
        budget.release(run.chargedBytes());
        run.chargedBytes(0);
        run.reservedBytes(0);
        metrics.runsActive.decrement();
        metrics.runsExpired.increment();
    }

    /** Drops every run and frees the codec (shutdown); no run is created after it. */
    public void dropAll() {
        closed = true;
        for (Run r : new ArrayList<>(runs.values())) {
            drop(r);
        }
        tombstones.clear();
        if (sweeper != null) {
            sweeper.cancel(false);
            sweeper = null;
        }
        if (copies != null) {
            copies.sweep();
        }
        if (codec != null) {
            codec.close();
        }
    }
}
