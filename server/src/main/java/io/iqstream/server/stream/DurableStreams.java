package io.iqstream.server.stream;

import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.ByteLog;
import io.iqstream.server.storage.StoreWriter;
import io.iqstream.server.storage.StreamStore;
import io.iqstream.server.worker.Workers;
import java.io.IOException;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every durable stream of this node, by path. A stream lives on the worker its path hashes to
 * ({@link Workers#ownerOf}), like a run: only that worker creates, appends to, closes, deletes or frees it. The map
 * is shared only so that a fork, created on its own worker, can find its parent and read the parent's bytes below
 * the fork point (which never change).
 *
 * <p>Memory: each stream is charged to the server's one {@link MemoryBudget} for what it really holds. Its heap —
 * {@link #STREAM_OVERHEAD_BYTES} of objects, its path, content type and expiry ({@link #bookkeepingBytes}), its
 * last {@code Stream-Seq} ({@link #seqBytes}) and its producers — goes through {@link MemoryBudget#tryChargeHeap},
 * so that a stranger's long paths or long headers are refused while the heap has room; its {@link ByteLog} (the
 * pooled segments its messages' bytes are kept in, their overhead, {@link ByteLog#INDEX_BYTES_PER_MESSAGE} per
 * message) under the same rule as a run's log (an ordinary-sized stream may use the headroom, an oversized one is
 * refused first). Refused, the request gets 503 with {@code Retry-After}. A stream is freed when
 * deleted or expired (its TTL since the last read or write, or its Expires-At): lazily by the request that finds
 * it expired, and by each worker's sweep every second.
 *
 * <p>Storage ({@code --durability disk}): each change a request makes is a record of {@link StreamRecords} written
 * through the {@link StreamStore}'s writer of the stream's worker ({@link #persist}); readers see it, and its
 * request is answered, only once the record is durable (the log's {@code commit}, {@link #afterWrites}). A freed
 * stream's file is removed. With no store ({@code --durability memory}) every change is applied at once.
 *
 * <p>Thread-safe as described; each method says on which thread it runs.
 */
public final class DurableStreams {
    private static final Logger LOG = LoggerFactory.getLogger(DurableStreams.class);
    /**
     * What a stream's objects cost on the heap beyond its strings: the stream, its log and the log's first tables,
     * its producer ledger, its waiter list, its map entry. Measured from outside (the heap's growth over thousands of
     * streams with short paths): about 556 bytes each; this bound has room for the map's growth.
     */
    public static final long STREAM_OVERHEAD_BYTES = 640;
    /** What a string costs on the heap beyond its characters (its object and its array's header). */
    static final long STRING_OVERHEAD_BYTES = 48;
    /** How often each worker frees its expired streams. */
    static final long SWEEP_MS = 1000;

    private final ConcurrentHashMap<String, DurableStream> streams = new ConcurrentHashMap<>();
    /** Each worker loop's sweeps begun, counted as each begins (what a test waits on instead of a clock). */
    private final ConcurrentHashMap<EventLoop, AtomicLong> sweepsBegun = new ConcurrentHashMap<>();
    private final MemoryBudget budget;
    private final Metrics metrics;
    private final Workers workers;
    private final long maxStreamBytes;
    /** The storage layer, or null when streams are kept in memory only. */
    private final StreamStore store;
    /** {@code --cold-after}: on disk, a stream idle this long keeps its bytes in its file only; 0: never. */
    private final long coldAfterMs;

    /**
     * The log of every cold stream: empty and retired (no fork can take a hold on it), shared since nothing is ever
     * appended to it; its release, when a cold stream is freed, gives back nothing.
     */
    private static final ByteLog COLD_LOG = retiredEmptyLog();
    /** Stream files found damaged at start, by file name, with what is wrong ({@link #damaged}). */
    private final java.util.Map<String, String> damagedFiles = new ConcurrentHashMap<>();

    private static ByteLog retiredEmptyLog() {
        ByteLog log = new ByteLog(ByteBufAllocator.DEFAULT);
        log.retireIfUnheld();
        return log;
    }

    /** What loading a cold stream's file gave the requests waiting for it. */
    enum Load {
        /** The stream's bytes are in memory again (or it is gone: the request finds that itself). */
        READY,
        /** The memory budget refused them: 503 with Retry-After. */
        OVER_BUDGET,
        /** The file could not be read, or did not hold what was acknowledged: 500, and logged. */
        FAILED
    }

    public DurableStreams(MemoryBudget budget, Metrics metrics, Workers workers, long maxStreamBytes,
            StreamStore store, long coldAfterMs) {
        this.budget = budget;
        this.metrics = metrics;
        this.workers = workers;
        this.maxStreamBytes = maxStreamBytes;
        this.store = store;
        this.coldAfterMs = store == null ? 0 : coldAfterMs;
    }

    /** Whether streams are kept on disk. */
    public boolean onDisk() {
        return store != null;
    }

    // ---- storage --------------------------------------------------------------------------------------------

    /** Whether the stream files have reached --disk-budget: a new stream or an append is then 507. */
    boolean diskFull() {
        return store != null && store.isFull();
    }

    /** Bytes the stream files take, and what they may take ({@code --disk-budget}); 0 and 0 in memory mode. */
    public long diskUsedBytes() {
        return store == null ? 0 : store.usedBytes();
    }

    public long diskBudgetBytes() {
        return store == null ? 0 : store.budgetBytes();
    }

    /** Whether the writer of {@code path}'s worker has room for another record (else 503). On that worker. */
    boolean storeHasRoom(String path) {
        return store == null || store.writer(ownerOf(path)).hasRoom();
    }

    /** {@link #persist} of each record in turn, {@code applied} once the last is durable (at once when none). */
    void persistAll(DurableStream s, List<byte[]> payloads, Runnable applied) {
        if (payloads.isEmpty()) {
            applied.run();
            return;
        }
        for (int i = 0; i < payloads.size() - 1; i++) {
            persist(s, payloads.get(i), () -> { });
        }
        persist(s, payloads.get(payloads.size() - 1), applied);
    }

    /**
     * Writes {@code payload} to {@code s}'s file and runs {@code applied} once it is durable, on s's worker: at
     * once with no store. A record that fails marks the stream failed ({@link DurableStream#storageFailure}) and
     * {@code applied} never runs: what it would have shown readers stays unseen. On s's worker.
     */
    void persist(DurableStream s, byte[] payload, Runnable applied) {
        if (store == null) {
            applied.run();
            return;
        }
        s.pendingWrites++;
        store.writer(ownerOf(s.path)).append(s.path, payload, failure -> {
            s.pendingWrites--;
            if (failure == null) {
                applied.run();
            } else {
                failed(s, failure);
            }
        });
    }

    /** Runs {@code then} once every record queued for {@code s} before it is written (at once when none is). */
    void afterWrites(DurableStream s, Runnable then) {
        if (store == null || s.pendingWrites == 0) {
            then.run();
            return;
        }
        s.pendingWrites++;
        store.writer(ownerOf(s.path)).barrier(failure -> {
            s.pendingWrites--;
            then.run();
        });
    }

    private void failed(DurableStream s, IOException failure) {
        if (s.storageFailure == null) {
            LOG.error("stream {}: writing its file failed; it takes no more writes until the server restarts "
                    + "(what was acknowledged is on the disk): {}", s.path, failure.toString());
            metrics.durableStorageFailures.increment();
        }
        s.storageFailure = failure;
    }

    /** Starts each worker's sweep of its expired streams. */
    public void startSweeps() {
        for (int i = 0; i < workers.size(); i++) {
            EventLoop loop = workers.get(i).loop();
            sweepsBegun.put(loop, new AtomicLong());
            loop.scheduleAtFixedRate(() -> sweep(loop), SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * How many sweeps of {@code loop} have begun. A sweep that begins after a stream's expiry frees it; once the
     * count has risen by two from a reading taken after the expiry, such a sweep has also ended. Any thread.
     */
    long sweepsBegun(EventLoop loop) {
        AtomicLong n = sweepsBegun.get(loop);
        return n == null ? 0 : n.get();
    }

    /** The worker loop that owns {@code path}. */
    public EventLoop ownerOf(String path) {
        return workers.ownerOf(path).loop();
    }

    public long maxStreamBytes() {
        return maxStreamBytes;
    }

    /** Streams held (soft-deleted ones included). */
    public int size() {
        return streams.size();
    }

    /**
     * Whether this node holds a stream at {@code path} (soft-deleted or expired but not yet freed included: its
     * requests are answered here, 410 or 404 as the protocol has it). Any thread: what a cluster lookup asks.
     */
    public boolean holds(String path) {
        return streams.containsKey(path) || damageOf(path) != null;
    }

    /**
     * Marks the stream file {@code fileName} damaged (found so at start, {@link StreamRecovery}): its stream answers
     * 500 with {@code reason}, and is held here for the cluster's lookups, so no node creates it again over its file.
     */
    void damaged(String fileName, String reason) {
        damagedFiles.put(fileName, reason);
        metrics.durableStreamsDamaged.increment();
    }

    /**
     * What is wrong with {@code path}'s file when it was found damaged at start, else null; no cost while no file
     * was (a path's file name is a hash, taken only then). Any thread.
     */
    public String damageOf(String path) {
        if (damagedFiles.isEmpty() || store == null) {
            return null;
        }
        return damagedFiles.get(store.directory().streamFile(path).getFileName().toString());
    }

    /**
     * The stream at {@code path}, or null; one found expired is deleted first (soft-deleted, and returned as
     * such, while forks hold it). On the path's owner worker.
     */
    DurableStream get(String path, long nowMs) {
        DurableStream s = streams.get(path);
        if (s != null && !s.softDeleted && s.isExpired(nowMs)) {
            metrics.durableStreamsExpired.increment();
            delete(s);
            return streams.get(path);
        }
        return s;
    }

    /** A stream as a fork's parent (any worker): null when absent, expired or soft-deleted. */
    DurableStream parentFor(String path, long nowMs) {
        DurableStream s = streams.get(path);
        return s == null || s.isExpired(nowMs) ? null : s;
    }

    /**
     * What a new stream's bookkeeping holds on the heap: {@link #STREAM_OVERHEAD_BYTES} and the strings a client
     * chose (its path, content type and expiry; two bytes a character at most).
     */
    static long bookkeepingBytes(String path, String contentType, String expiresAt) {
        return STREAM_OVERHEAD_BYTES + stringBytes(path) + stringBytes(contentType) + stringBytes(expiresAt);
    }

    /** What keeping {@code seq} as a stream's last {@code Stream-Seq} holds on the heap (0 for none). */
    static long seqBytes(String seq) {
        return stringBytes(seq);
    }

    private static long stringBytes(String s) {
        return s == null ? 0 : STRING_OVERHEAD_BYTES + 2L * s.length();
    }

    /** Takes a new stream's {@link #bookkeepingBytes} from the budget; false when refused (503). */
    boolean admit(long bookkeepingBytes) {
        return budget.tryChargeHeap(bookkeepingBytes);
    }

    /** Returns a stream's bookkeeping taken by {@link #admit} that was not used. */
    void unadmit(long bookkeepingBytes) {
        budget.releaseHeap(bookkeepingBytes);
    }

    /** Takes {@code bytes} more of heap for {@code s} (a Stream-Seq, a producer); false when refused (503). */
    boolean chargeHeap(DurableStream s, long bytes) {
        if (bytes > 0 && !budget.tryChargeHeap(bytes)) {
            return false;
        }
        s.heapChargedBytes += bytes;
        return true;
    }

    /** Gives back heap taken by {@link #chargeHeap} (refused after all, or no longer held). */
    void unchargeHeap(DurableStream s, long bytes) {
        if (bytes > 0) {
            s.heapChargedBytes -= bytes;
            budget.releaseHeap(bytes);
        }
    }

    /** Takes a live reader's slot (long-poll or SSE) under --max-subscribers; false when full (503). */
    boolean admitReader() {
        return budget.tryAdmitSubscriber();
    }

    void releaseReader() {
        budget.releaseSubscriber();
    }

    /** Charges a stream recovered from the disk, whatever the budget says; false when that passed it. At start. */
    boolean chargeRecovered(DurableStream s, long heapBytes, long logBytes) {
        s.heapChargedBytes += heapBytes;
        s.chargedBytes += logBytes;
        return budget.forceChargeHeap(heapBytes) & budget.forceCharge(logBytes);
    }

    /** Frees a recovered soft-deleted stream that no fork holds (its last fork was freed before the restart). */
    void freeIfUnheld(DurableStream s) {
        if (s.softDeleted && s.log.retireIfUnheld()) {
            free(s);
        }
    }

    /** Counts {@code bytes} of messages held (a recovered stream's). */
    void metricsHeld(long bytes) {
        metrics.durableBytesHeld.add(bytes);
    }

    /**
     * Recovers the streams of the store's data directory (see {@link StreamRecovery}); at start, before serving.
     * Returns how many; nothing with no store.
     */
    public int recover(ByteBufAllocator alloc) throws IOException {
        return store == null ? 0 : StreamRecovery.recover(this, store, metrics, alloc);
    }

    /** Adds a created stream (its overhead already admitted). On its owner worker. */
    void put(DurableStream s) {
        streams.put(s.path, s);
        metrics.durableStreamsCreated.increment();
        metrics.durableStreamsActive.increment();
    }

    /** Takes {@code bytes} more for {@code s}'s messages; false when the budget refuses (503). */
    boolean charge(DurableStream s, long bytes) {
        if (!budget.charge(bytes, s.chargedBytes + bytes)) {
            return false;
        }
        s.chargedBytes += bytes;
        return true;
    }

    /** Gives back bytes taken by {@link #charge} that were not stored after all. */
    void uncharge(DurableStream s, long bytes) {
        s.chargedBytes -= bytes;
        budget.release(bytes);
    }

    /**
     * Deletes {@code s}: soft while forks hold its bytes (it then answers 410 and its path cannot be reused until
     * the last fork goes), else freed, and its parent freed too when that was soft-deleted and this was its last
     * fork. On {@code s}'s owner worker.
     */
    void delete(DurableStream s) {
        s.softDeleted = true;
        if (s.cold || s.log.retireIfUnheld()) { // a cold stream has no fork: its (empty) log is retired already
            free(s);
        } else if (store != null) {
            persist(s, StreamRecords.delete(), () -> { });
        }
        s.wakeWaiters();
    }

    /**
     * Frees {@code s}, then each soft-deleted ancestor it was the last fork of: a loop, not a recursion, so a chain
     * of forks as long as a client likes is freed whole (an ancestor on another worker is freed there, by a task).
     */
    private void free(DurableStream s) {
        while (s != null) {
            streams.remove(s.path, s);
            removeFile(s);
            long bytes = s.log.release();
            budget.release(s.chargedBytes);
            budget.releaseHeap(s.heapChargedBytes);
            s.chargedBytes = 0;
            s.heapChargedBytes = 0;
            metrics.durableStreamsActive.decrement();
            metrics.durableBytesHeld.add(-bytes);
            s = s.parent == null ? null : forkGone(s.parent);
        }
    }

    /** Removes a freed stream's file, after every record queued for it (its answer waits for that). */
    private void removeFile(DurableStream s) {
        if (store == null) {
            return;
        }
        s.pendingWrites++;
        store.writer(ownerOf(s.path)).remove(s.path, failure -> {
            s.pendingWrites--;
            if (failure != null) {
                LOG.warn("stream {}: removing its file failed: {}", s.path, failure.toString());
            }
        });
    }

    /** Holds {@code parent}'s bytes for a new fork; false when it was freed meanwhile. Any worker. */
    boolean holdForFork(DurableStream parent) {
        return parent.log.holdForFork();
    }

    /** A fork of {@code parent} is gone: the parent is freed (on its worker) if it was soft-deleted and unheld. */
    void releaseFork(DurableStream parent) {
        DurableStream now = forkGone(parent);
        if (now != null) {
            free(now);
        }
    }

    /**
     * A fork of {@code parent} is gone. Returns {@code parent} when it is to be freed now, on this thread (it was
     * soft-deleted, this was its last fork, and this is its worker); one on another worker is freed there.
     */
    private DurableStream forkGone(DurableStream parent) {
        if (!parent.log.releaseFork() || !parent.softDeleted) {
            return null;
        }
        EventLoop owner = ownerOf(parent.path);
        if (owner.inEventLoop()) {
            return parent.log.retireIfUnheld() ? parent : null;
        }
        owner.execute(() -> {
            if (parent.softDeleted && parent.log.retireIfUnheld()) {
                free(parent);
            }
        });
        return null;
    }

    // ---- cold streams ---------------------------------------------------------------------------------------

    /**
     * Drops an idle stream's bytes from memory, when nothing needs them there: its file holds every one of them
     * (nothing on its way to the disk, no failed write), no live read follows it, no load is under way, and it is
     * neither a fork nor held by one (a fork reads its source's segments). Its producers, {@code Stream-Seq},
     * closure and configuration stay. On its owner worker.
     */
    private void goCold(DurableStream s) {
        if (s.cold || s.softDeleted || s.parent != null || s.pendingWrites > 0 || s.liveReads > 0
                || !s.waiters.isEmpty() || s.loading != null || s.storageFailure != null) {
            return;
        }
        ByteLog warm = s.log;
        s.coldTail = warm.tail(); // before `cold`: a cold stream's tail is this
        s.cold = true; // before the retirement: a fork's worker refused a hold from here on loads the stream
        if (!warm.retireIfUnheld()) {
            s.cold = false;
            return;
        }
        s.log = COLD_LOG;
        long bytes = warm.release();
        budget.release(s.chargedBytes);
        s.chargedBytes = 0;
        metrics.durableBytesHeld.add(-bytes);
        metrics.durableStreamsCold.increment();
    }

    /**
     * How long {@code s} stays idle before it goes cold: {@code --cold-after}, or for a closed stream (it takes no
     * more appends: only readers of its history come, and they are answered from its file) one sweep, at most
     * {@code --cold-after}. A finished answer's stream then frees its memory within a second or two of its
     * readers' leaving, rather than holding it beside the answers still running.
     */
    private long coldAfterIdleMs(DurableStream s) {
        return s.isClosed() ? Math.min(SWEEP_MS, coldAfterMs) : coldAfterMs;
    }

    /** Whether idle streams go cold ({@code --cold-after} on disk): recovered ones then start cold. */
    boolean keepsColdStreams() {
        return coldAfterMs > 0;
    }

    /**
     * Whether a request on {@code path} must load a cold stream first, and which: the stream at {@code path}, or
     * (a fork's creation) its source at {@code forkedFrom}. Null when none. Any worker.
     */
    DurableStream coldFor(String path, String forkedFrom) {
        if (coldAfterMs == 0) {
            return null;
        }
        DurableStream s = streams.get(path);
        if (s != null) {
            return s.cold ? s : null;
        }
        DurableStream source = forkedFrom == null ? null : streams.get(forkedFrom);
        return source != null && source.cold ? source : null;
    }

    /**
     * Loads a cold stream's bytes from its file (on the storage thread; the worker never waits), then tells
     * {@code then}, on {@code s}'s owner worker. Requests that come while it loads wait for the same load. At once
     * when the stream is not cold. On {@code s}'s owner worker.
     */
    void load(DurableStream s, ByteBufAllocator alloc, Consumer<Load> then) {
        if (!s.cold) {
            then.accept(Load.READY);
            return;
        }
        if (s.loading != null) {
            s.loading.add(then);
            return;
        }
        s.loading = new ArrayList<>(2);
        s.loading.add(then);
        store.writer(ownerOf(s.path)).read(store.directory().streamFile(s.path),
                new StreamFileLoad(alloc, budget, s.coldTail, load -> {
                    Load result = adopt(s, load);
                    List<Consumer<Load>> waiting = s.loading;
                    s.loading = null;
                    for (Consumer<Load> w : waiting) {
                        w.accept(result);
                    }
                }));
    }

    /** Swaps in the log a cold stream's load made; READY once its bytes are in memory (and charged). */
    private Load adopt(DurableStream s, StreamFileLoad load) {
        if (load.failure() != null) {
            return failedLoad(s, load.failure());
        }
        if (load.overBudget()) {
            return Load.OVER_BUDGET;
        }
        if (!s.cold || streams.get(s.path) != s) {
            load.giveBack();
            return Load.READY; // freed while it loaded (deleted, expired): the request answers 404 itself
        }
        s.log = load.log();
        s.chargedBytes += load.chargedBytes();
        s.cold = false;
        dropColdIndex(s);
        metrics.durableBytesHeld.add(load.heldBytes());
        metrics.durableStreamsLoaded.increment();
        return Load.READY;
    }

    /**
     * Queues {@code read} of cold stream {@code s}'s file on the storage thread of its worker (after every record
     * of it queued before); its outcome comes back on that worker. On {@code s}'s owner worker.
     */
    void readCold(DurableStream s, StoreWriter.FileRead read) {
        store.writer(ownerOf(s.path)).read(store.directory().streamFile(s.path), read);
    }

    /** The memory budget (a read from a cold stream's file charges its page to the copies' share). */
    MemoryBudget budget() {
        return budget;
    }

    /**
     * Keeps the index a read of cold stream {@code s}'s file built ({@link DurableStream#coldIndex}), when the
     * stream is still cold, has none, and the heap's share takes it; else it is dropped (the next read builds it
     * again). On {@code s}'s owner worker.
     */
    void keepColdIndex(DurableStream s, long[] index) {
        if (!s.cold || s.coldIndex != null || streams.get(s.path) != s) {
            return;
        }
        long bytes = ColdIndex.bytes(index);
        if (budget.tryChargeHeap(bytes)) {
            s.coldIndex = index;
            s.heapChargedBytes += bytes;
        }
    }

    private void dropColdIndex(DurableStream s) {
        if (s.coldIndex != null) {
            long bytes = ColdIndex.bytes(s.coldIndex);
            s.coldIndex = null;
            s.heapChargedBytes -= bytes;
            budget.releaseHeap(bytes);
        }
    }

    private static Load failedLoad(DurableStream s, String why) {
        LOG.error("stream {}: its file cannot be loaded ({}); its requests answer 500 until it can", s.path, why);
        return Load.FAILED;
    }

    /** Writes what is queued and closes the storage layer (at shutdown, after the workers; also on a failed start). */
    public void closeStore() {
        if (store != null) {
            try {
                store.close();
            } catch (IOException e) {
                LOG.warn("closing the data directory: {}", e.toString());
            }
        }
    }

    /** Frees every stream; at shutdown, once the workers have stopped (no other thread touches them then). */
    public void dropAll() {
        for (DurableStream s : streams.values()) {
            s.log.release();
            budget.release(s.chargedBytes);
            budget.releaseHeap(s.heapChargedBytes);
            s.chargedBytes = 0;
            s.heapChargedBytes = 0;
        }
        streams.clear();
    }

    /** Frees the expired streams {@code loop} owns, and lets its idle ones go cold. On that loop. */
    private void sweep(EventLoop loop) {
        sweepsBegun.get(loop).incrementAndGet();
        long now = System.currentTimeMillis();
        List<DurableStream> expired = null;
        for (DurableStream s : streams.values()) {
            if (ownerOf(s.path) != loop) {
                continue;
            }
            if (!s.softDeleted && s.isExpired(now)) {
                if (expired == null) {
                    expired = new ArrayList<>();
                }
                expired.add(s);
            } else if (coldAfterMs > 0 && now - s.lastAccessMs >= coldAfterIdleMs(s)) {
                goCold(s);
            }
        }
        if (expired != null) {
            for (DurableStream s : expired) {
                metrics.durableStreamsExpired.increment();
                delete(s);
            }
        }
    }
}
