package io.iqstream.server.run;

import java.util.Collections;
import java.util.List;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.opentelemetry.api.trace.SpanContext;
import java.util.ArrayList;
import java.util.concurrent.ScheduledFuture;

/**
 * One agent run: its log, its current publisher, its readers and its timers.
 *
 * <p>Confined to the worker event loop that owns the run id (see {@code worker.Workers}); nothing here is
 * thread-safe, and nothing needs to be.
 *
 * <h2>Implementation notes</h2>
 * Fan-out: {@link #store} stores the frame once and calls every awake reader; readers write slices of the log
 * into their channels but do not flush. The publisher's read loop calls {@link #flushReaders()} once at the end
 * of its read (channelReadComplete), so a burst of events costs one flush per subscriber per loop turn.
 *
 * <p>A reader that cannot take more now (its socket is unwritable, or it has used its catch-up bytes for this
 * loop turn) {@link #park parks}: it leaves the list walked per event and is {@link #wake woken} by its channel's
 * writability change or its next-turn task, then reads on from its cursor. So an append costs the readers that
 * can write, not every reader of the run: 1,000 readers that never read cost nothing per event
 * ({@code HostileFloodTest}). With one or a few readers, which never park while they keep up, the walk is the
 * same loop over the same list as before.
 */
public final class Run {
    private final String id;
    private final RunProtocol protocol;
    private RunLog log;
    private final long createdNanos;
    /** The readers told of each append (awake). */
    private final ArrayList<RunReader> readers = new ArrayList<>(2);
    /** The readers that cannot take more now ({@link #park}): not walked per append; usually empty. */
    private final ArrayList<RunReader> parked = new ArrayList<>(0);
    private Object publisher;
    private boolean ended;
    private boolean dropped;
    private boolean dirty;
    private long lastAppendNanos;
    private long reservedBytes;
    private long chargedBytes;
    private ScheduledFuture<?> timer;
    private String threadId;
    private long startedAtMicros;
    private long endedAtMs;
    private long publisherLeaseMs = -1;
    private long restoreToId;
    /** The span context of the request that published it last, when traced; readers' spans link to it. */
    private SpanContext traceContext;
    /** Ended and written whole to its file in the data directory ({@link RunSpill}). */
    private boolean onDisk;
    /** When its bytes were last needed in memory (ended, or loaded back from its file), for {@link RunSpill}. */
    private long inMemorySinceNanos;

    /** An AG-UI run. */
    public Run(String id, ByteBufAllocator allocator, SegmentCodec codec, SegmentCopies copies, long nowNanos) {
        this(id, RunProtocol.AG_UI, allocator, codec, copies, nowNanos);
    }

    public Run(String id, RunProtocol protocol, ByteBufAllocator allocator, SegmentCodec codec, SegmentCopies copies,
            long nowNanos) {
        this.id = id;
        this.protocol = protocol;
        this.log = new RunLog(allocator, codec, copies);
        this.createdNanos = nowNanos;
        this.lastAppendNanos = nowNanos;
    }

    public String id() {
        return id;
    }

    /** The protocol its events are in, fixed when it was created. */
    public RunProtocol protocol() {
        return protocol;
    }

    /** The span context of its last publishing request, or null (not traced). */
    public SpanContext traceContext() {
        return traceContext;
    }

    public void traceContext(SpanContext context) {
        this.traceContext = context;
    }

    public RunLog log() {
        return log;
    }

    /** Whether the ended run is written whole to its file (then its bytes may leave memory). */
    public boolean isOnDisk() {
        return onDisk;
    }

    void onDisk(boolean written) {
        this.onDisk = written;
    }

    /** Whether its events are only on disk now: a reader must have them loaded first ({@link RunRegistry#load}). */
    public boolean isSpilled() {
        return onDisk && log.isReleased();
    }

    long inMemorySinceNanos() {
        return inMemorySinceNanos;
    }

    void inMemorySince(long nanos) {
        this.inMemorySinceNanos = nanos;
    }

    /** Its events loaded back from its file into {@code loaded} (sealed, the same ids); the released log goes. */
    void replaceLog(RunLog loaded) {
        if (loaded.size() != log.size()) {
            throw new IllegalStateException("run " + id + ": " + loaded.size() + " events loaded, " + log.size()
                    + " ended with");
        }
        this.log = loaded;
    }

    /** Id of the last event (0 when empty). */
    public int lastEventId() {
        return log.size();
    }

    public boolean isEnded() {
        return ended;
    }

    public boolean isDropped() {
        return dropped;
    }

    public long createdNanos() {
        return createdNanos;
    }

    public long lastAppendNanos() {
        return lastAppendNanos;
    }

    /** The {@code threadId} of the run's {@code RUN_STARTED} (its first event), or null when it has none. */
    public String threadId() {
        return threadId;
    }

    /**
     * When the run was indexed under its thread (its RUN_STARTED arrived): a {@link StartClock} stamp, epoch
     * microseconds, strictly increasing across the node.
     */
    public long startedAtMicros() {
        return startedAtMicros;
    }

    /** Wall-clock time the run ended, epoch ms; 0 while it is open. */
    public long endedAtMs() {
        return endedAtMs;
    }

    void indexed(String thread, long startedAtMicros) {
        this.threadId = thread;
        this.startedAtMicros = startedAtMicros;
    }

    void endedAt(long nowMs) {
        this.endedAtMs = nowMs;
    }

    /** The publishing request now attached, or null. */
    public Object publisher() {
        return publisher;
    }

    public void publisher(Object session) {
        this.publisher = session;
    }

    /**
     * Bytes admission reserved for this run when it was created: while it streams, its charge never drops below
     * this (0 once ended).
     */
    public long reservedBytes() {
        return reservedBytes;
    }

    public void reservedBytes(long bytes) {
        this.reservedBytes = bytes;
    }

    /**
     * Bytes the memory budget holds for this run now: its reservation, or its log's {@link RunLog#heldBytes()}
     * when larger (and, once ended, exactly that).
     */
    public long chargedBytes() {
        return chargedBytes;
    }

    public void chargedBytes(long bytes) {
        this.chargedBytes = bytes;
    }

    /**
     * How long the run waits for a publishing request once none is open, set by the publisher's
     * {@code X-IQStream-Publisher-Lease}; -1 (the default) when it never sent one: then a broken request waits
     * {@code --publisher-timeout} and a completed one {@code --run-idle-timeout}.
     */
    public long publisherLeaseMs() {
        return publisherLeaseMs;
    }

    public void publisherLeaseMs(long ms) {
        this.publisherLeaseMs = ms;
    }

    /**
     * For a run its publisher restores after the node that held it was lost ({@code X-IQStream-Restore: N}): the
     * last id of the events being restored, N; 0 otherwise. A reader may resume at any id up to it while the
     * restore is under way (it waits for the rest), not only up to the events already appended.
     */
    public long restoreToId() {
        return restoreToId;
    }

    public void restoreToId(long id) {
        this.restoreToId = id;
    }

    /** The run's single pending timer (publisher-lost, idle or retention), replaced as the run changes state. */
    public void timer(ScheduledFuture<?> next) {
        if (timer != null) {
            timer.cancel(false);
        }
        timer = next;
    }

    /**
     * Stores an event whose frame is {@code frameLength} bytes ({@link RunLog#frameLength}) and tells the readers.
     * {@code terminal} marks an event that ends the run (its protocol's rule). Size and budget
     * checks are the caller's ({@link RunRegistry#append}).
     */
    void store(ByteBuf json, int frameLength, boolean terminal, long nowNanos) {
        log.append(json, frameLength);
        lastAppendNanos = nowNanos;
        if (terminal) {
            ended = true;
        }
        notifyReaders();
    }

    /** Ends the run when not even its closing event could be stored. */
    void markEndedWithoutEvent() {
        ended = true;
        notifyReaders();
    }

    void markDropped() {
        dropped = true;
        ended = true;
        timer(null);
        ArrayList<RunReader> all = new ArrayList<>(readers);
        all.addAll(parked);
        readers.clear();
        parked.clear();
        for (int i = all.size() - 1; i >= 0; i--) {
            all.get(i).runDropped();
        }
    }

    private void notifyReaders() {
        ArrayList<RunReader> rs = readers;
        // backwards: a reader that ends its stream here removes itself without disturbing the rest
        for (int i = rs.size() - 1; i >= 0; i--) {
            rs.get(i).eventsAvailable();
        }
        dirty = !rs.isEmpty();
    }

    /** Flushes every reader written to since the last flush; once per publisher read. */
    public void flushReaders() {
        if (!dirty) {
            return;
        }
        dirty = false;
        ArrayList<RunReader> rs = readers;
        for (int i = rs.size() - 1; i >= 0; i--) {
            rs.get(i).flush();
        }
    }

    public void addReader(RunReader reader) {
        readers.add(reader);
    }

    public void removeReader(RunReader reader) {
        if (!readers.remove(reader)) {
            parked.remove(reader);
        }
    }

    /**
     * Takes an attached reader off the list walked per append until {@link #wake}: it cannot take more now and
     * will read on from its cursor when woken (its socket drained, or its next loop turn). No-op if not awake.
     */
    public void park(RunReader reader) {
        if (readers.remove(reader)) {
            parked.add(reader);
        }
    }

    /** Puts a parked reader back on the list walked per append. No-op if not parked. */
    public void wake(RunReader reader) {
        if (parked.remove(reader)) {
            readers.add(reader);
        }
    }

    /** The readers attached now, awake and parked (a copy; the owning loop only). */
    public List<RunReader> readers() {
        ArrayList<RunReader> all = new ArrayList<>(readers);
        all.addAll(parked);
        return Collections.unmodifiableList(all);
    }

    public int readerCount() {
        return readers.size() + parked.size();
    }
}
