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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

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
    /** Ended runs go to disk ({@code --durability disk}); null: they stay in memory for their retention. */
    private RunSpill spill;
    /** Ended runs on disk whose bytes are in memory too (just ended, or loaded for a reader). */
    private final ArrayList<Run> onDiskInMemory = new ArrayList<>();
    /** Readers waiting for a run's bytes to be loaded back from its file, by run. */
    private final HashMap<Run, ArrayList<Consumer<Boolean>>> loading = new HashMap<>();
    private ScheduledFuture<?> sweeper;
    /** Set by {@link #dropAll}: the server is closing. */
    private boolean closed;

    /**
     * How long an ended run on disk keeps its bytes in memory after it ended or was last loaded, once no reader
     * holds it: the browsers that reconnect right after the end read from memory, and a run at rest costs only
     * its few fields ({@link RunLog#RUN_OVERHEAD_BYTES}) for the rest of its retention.
     */
    static final long KEEP_LOADED_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RunRegistry.class);

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
        freeLoadedRuns(now, false);
        sweptMs += SWEEP_INTERVAL_MS;
        if (sweptMs >= CACHE_TRIM_INTERVAL_MS && allocator instanceof PooledByteBufAllocator pooled) {
            sweptMs = 0;
            pooled.trimCurrentThreadCache();
        }
    }

    /** Memory is short: frees every idle unpacked copy, lingering ones too. True when that gave bytes back. */
    private boolean freeIdleCopies() {
        boolean freed = freeLoadedRuns(System.nanoTime(), true);
        return copies != null && copies.sweep() > 0 || freed;
    }

    /** Writes ended runs to {@code spill} from now on ({@code --durability disk}); once, at start. */
    public void spillTo(RunSpill to) {
        this.spill = to;
    }

    /**
     * Frees the bytes of ended runs on disk that no reader holds: those idle for {@link #KEEP_LOADED_NANOS}, or
     * all of them when {@code now} is asked for (memory is short). True when any were freed.
     */
    private boolean freeLoadedRuns(long now, boolean all) {
        boolean freed = false;
        for (int i = onDiskInMemory.size() - 1; i >= 0; i--) {
            Run r = onDiskInMemory.get(i);
            if (r.isDropped() || r.log().isReleased()) {
                onDiskInMemory.remove(i);
            } else if (r.readerCount() == 0 && (all || now - r.inMemorySinceNanos() >= KEEP_LOADED_NANOS)) {
                onDiskInMemory.remove(i);
                r.log().release();
                budget.release(r.chargedBytes() - RunLog.RUN_OVERHEAD_BYTES);
                r.chargedBytes(RunLog.RUN_OVERHEAD_BYTES);
                metrics.runsSpilled.increment();
                freed = true;
            }
        }
        return freed;
    }

    /** The ended run's file is written (or failed): from now on its bytes may leave memory. */
    private void written(Run run, IOException failure) {
        if (failure != null) {
            LOG.warn("run {}: writing its file failed, kept in memory for its retention: {}", run.id(),
                    failure.toString());
            return;
        }
        if (run.isDropped()) {
            if (!closed) {
                spill.remove(run.id()); // dropped (DELETE) while its file was on its way
            }
            return;
        }
        run.onDisk(true);
        onDiskInMemory.add(run);
    }

    /**
     * Has an ended run's bytes in memory for a reader: at once ({@code ready} gets true now) unless it is
     * {@linkplain Run#isSpilled spilled}; then its file is read on the worker's storage thread and {@code ready}
     * gets true once the bytes are back, charged to the budget, or false when they cannot be (the budget is full,
     * or the file cannot be read: logged). On this loop.
     */
    public void load(Run run, Consumer<Boolean> ready) {
        if (!run.isSpilled()) {
            ready.accept(true);
            return;
        }
        ArrayList<Consumer<Boolean>> waiting = loading.get(run);
        if (waiting != null) {
            waiting.add(ready);
            return;
        }
        waiting = new ArrayList<>(2);
        waiting.add(ready);
        loading.put(run, waiting);
        spill.read(run.id(), (saved, failure) -> loaded(run, saved, failure));
    }

    private void loaded(Run run, RunSpill.Saved saved, IOException failure) {
        ArrayList<Consumer<Boolean>> waiting = loading.remove(run);
        boolean ok = false;
        if (failure != null) {
            LOG.error("run {}: its file cannot be read, not served: {}", run.id(), failure.toString());
        } else if (!run.isDropped() && run.isSpilled()) {
            ok = refill(run, saved);
        } else {
            ok = !run.isDropped();
        }
        if (ok) {
            run.inMemorySince(System.nanoTime());
            metrics.runsLoaded.increment();
        }
        if (waiting != null) {
            for (Consumer<Boolean> w : waiting) {
                w.accept(ok);
            }
        }
    }

    /** Puts a spilled run's saved events back into a sealed log of its own, within the budget. */
    private boolean refill(Run run, RunSpill.Saved saved) {
        long estimate = RunLog.RUN_OVERHEAD_BYTES;
        for (ByteBuffer e : saved.events()) {
            estimate += e.remaining() + 24;
        }
        estimate += (estimate / RunLog.SEGMENT_BYTES + 1) * (RunLog.SEGMENT_BYTES + RunLog.SEGMENT_OVERHEAD_BYTES);
        if (!budget.tryChargeWithinBudget(estimate)) {
            return false;
        }
        RunLog log = new RunLog(allocator, codec, copies);
        for (ByteBuffer e : saved.events()) {
            log.append(Unpooled.wrappedBuffer(e.duplicate()));
        }
        log.seal();
        run.replaceLog(log);
        long held = log.heldBytes();
        budget.release(estimate - held + RunLog.RUN_OVERHEAD_BYTES);
        run.chargedBytes(held);
        onDiskInMemory.add(run);
        return true;
    }

    /**
     * Holds a run recovered from its file at start: ended, its bytes on disk only, in its thread's listing, until
     * its retention (from its end) passes. False when its retention has passed (its file is removed) or the
     * budget cannot hold it. On the starting thread, before the worker serves.
     */
    public boolean restore(RunSpill.Saved saved, long nowMs) {
        long leftMs = saved.endedAtMs() + config.retentionMs() - nowMs;
        if (leftMs <= 0) {
            spill.remove(saved.runId());
            return false;
        }
        long threadBytes = saved.threadId() == null ? 0 : ThreadIndex.bytesFor(saved.threadId());
        if (runs.containsKey(saved.runId())
                || !budget.tryChargeWithinBudget(RunLog.RUN_OVERHEAD_BYTES + threadBytes)) {
            return false;
        }
        Run run = new Run(saved.runId(), saved.protocol(), allocator, codec, copies, System.nanoTime());
        for (ByteBuffer e : saved.events()) {
            ByteBuf json = Unpooled.wrappedBuffer(e.duplicate());
            run.store(json, run.log().frameLength(json.readableBytes()), false, System.nanoTime());
        }
        run.markEndedWithoutEvent();
        run.endedAt(saved.endedAtMs());
        run.log().release();
        run.onDisk(true);
        run.chargedBytes(RunLog.RUN_OVERHEAD_BYTES);
        if (saved.threadId() != null) {
            threads.restore(saved.threadId(), run, saved.startedAtMicros(), threadBytes);
        }
        runs.put(run.id(), run);
        metrics.runsActive.increment();
        run.timer(loop.schedule(() -> drop(run), leftMs, TimeUnit.MILLISECONDS));
        return true;
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
        if (spill != null && !closed) {
            run.inMemorySince(System.nanoTime());
            if (!spill.write(run, failure -> written(run, failure))) {
                LOG.debug("run {}: not written to disk now (storage queue full or memory short); kept in memory",
                        run.id());
            }
        }
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
        if (run.isOnDisk() && !closed) {
            spill.remove(run.id());
        }
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
