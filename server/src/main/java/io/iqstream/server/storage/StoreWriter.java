package io.iqstream.server.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's writes to its streams' files, on a thread of its own, so the worker's event loop never waits on the
 * disk. The worker queues a record ({@link #append}), a file's removal or a barrier, each with an {@link Outcome};
 * this thread takes everything queued when it wakes as one batch, writes it in order, flushes each file the batch
 * touched once (under {@link FsyncPolicy#BATCH}: group commit), and hands the outcomes back to the worker's loop in
 * one task, in the order queued. An outcome of success means the record is on the disk as the policy says.
 *
 * <p>A file whose write or flush failed is cut back to where it was and refused from then on (fail-stop: after a
 * failed flush, what the kernel holds cannot be trusted), until it is removed; every later record for it fails
 * too, so a file never holds a record after a hole. Queued bytes are bounded ({@link #MAX_QUEUED_BYTES}): past it,
 * {@link #hasRoom} says no and the request gets 503 (a request's own records may pass it by their size).
 *
 * <p>The queue is the one cross-thread hand-off; each other field is this writer's thread's own.
 */
public final class StoreWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreWriter.class);
    /** Records queued and not yet written may hold at most this many bytes per worker. */
    public static final long MAX_QUEUED_BYTES = 64L << 20;
    /**
     * Files kept open per writer; past it the least recently written is closed (and opened again at its next write:
     * two system calls a record when more streams are written than this). A quarter of the process's file limit
     * shared by the writers, within 64-1024 ({@link #openFilesFor}); the main port's default connection cap leaves
     * these descriptors free.
     */
    private final int maxOpenFiles;
    /** The fewest and the most files a writer keeps open. */
    public static final int MIN_OPEN_FILES = 64;
    public static final int MAX_OPEN_FILES = 1024;

    /** Files each of {@code writers} writers keeps open under a file limit of {@code fileLimit} (-1: unknown). */
    public static int openFilesFor(long fileLimit, int writers) {
        if (fileLimit <= 0) {
            return MIN_OPEN_FILES;
        }
        return (int) Math.max(MIN_OPEN_FILES, Math.min(MAX_OPEN_FILES, fileLimit / 4 / Math.max(1, writers)));
    }
    /** Flushes under way at once, for all writers together ({@code --fsync batch}). */
    static final int FLUSH_THREADS = 32;
    /** Under {@code --fsync batch}, the files are flushed and the journal emptied at least this often. */
    static final long CHECKPOINT_MS = 2_000;

    /** What happened to a queued task; called on the worker's loop. {@code failure} null: done (durable). */
    public interface Outcome {
        void done(IOException failure);
    }

    /** What a queued read found; called on the worker's loop. {@code bytes} null: {@code failure} says why. */
    public interface ReadOutcome {
        void done(byte[] bytes, IOException failure);
    }

    /**
     * A read of a file done on the storage thread, in queue order (after every record queued before it), whose
     * outcome goes back to the worker: {@link #read} on the storage thread, then {@link #done} on the worker's loop.
     */
    public interface FileRead {
        /** Reads what it needs of {@code file}; keeps what it found, or why it failed, for {@link #done}. */
        void read(Path file);

        /** On the worker's loop, once {@link #read} has run. */
        void done();

        /** Instead of {@link #done}, on the storage thread, when the worker has stopped (shutdown): let go of it. */
        default void abandoned() {
        }
    }

    /**
     * A file kept open, with its size: the next record's offset, known without asking the kernel (one {@code fstat}
     * a record less); read once when the file is opened, moved by this writer's writes and cut-backs only.
     */
    private static final class OpenFile {
        final FileChannel ch;
        long size;

        OpenFile(FileChannel ch) throws IOException {
            this.ch = ch;
            this.size = ch.size();
        }
    }

    private record Task(Path file, byte[] frame, boolean remove, Outcome outcome, FileRead read) {
        Task(Path file, byte[] frame, boolean remove, Outcome outcome) {
            this(file, frame, remove, outcome, null);
        }
    }

    private final DataDirectory dir;
    private final FsyncPolicy fsync;
    private final Executor owner;
    private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
    private final AtomicLong queuedBytes = new AtomicLong();
    // what this writer did, for /metrics: written by its thread only, read by any
    private volatile long batches;
    private volatile long records;
    private volatile long flushNanos;
    /** Bytes of every stream file of the node (shared by its writers). */
    private final AtomicLong usedBytes;
    private final Thread thread;
    private volatile boolean running = true;
    private final Map<Path, OpenFile> open = new LinkedHashMap<>(16, 0.75f, true);
    private final Set<Path> broken = new HashSet<>();
    /** {@code --fsync batch}: one flush of this per batch; the files at a checkpoint. Null otherwise. */
    private final Journal journal;
    /** Files written, and files created or removed, since the last checkpoint (batch only). */
    private final Set<Path> writtenSinceCheckpoint = new HashSet<>();
    private final List<Path> entriesSinceCheckpoint = new ArrayList<>();
    private long checkpointNanos = System.nanoTime();

    StoreWriter(DataDirectory dir, FsyncPolicy fsync, Executor owner, String name, AtomicLong usedBytes,
            int maxOpenFiles) throws IOException {
        this.maxOpenFiles = maxOpenFiles;
        this.journal = fsync == FsyncPolicy.BATCH ? Journal.open(dir.root(), name) : null;
        this.usedBytes = usedBytes;
        this.dir = dir;
        this.fsync = fsync;
        this.owner = owner;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * Queues a record for {@code key}'s file; its outcome always comes. Worker thread. The caller asks
     * {@link #hasRoom} first: a queue past {@link #MAX_QUEUED_BYTES} is refused there (503), not here, so a record
     * of a change already made in memory is never dropped.
     */
    public void append(String key, byte[] payload, Outcome outcome) {
        appendTo(dir.streamFile(key), payload, outcome);
    }

    /** {@link #append} to a file of the data directory named by its path (an ended run's file). Worker thread. */
    public void appendTo(Path file, byte[] payload, Outcome outcome) {
        byte[] frame = RecordFile.frame(payload);
        queuedBytes.addAndGet(frame.length);
        queue.add(new Task(file, frame, false, outcome));
    }

    /** Queues the removal of {@code file} (after every record queued before it). Worker thread. */
    public void removeFile(Path file, Outcome outcome) {
        queue.add(new Task(file, null, true, outcome));
    }

    /**
     * Queues a read of {@code file}'s whole records ({@link RecordFile#parse}), after every record queued before
     * it; {@code outcome} gets the records' bytes on the worker's loop. Worker thread.
     */
    public void read(Path file, ReadOutcome outcome) {
        read(file, new FileRead() {
            private byte[] bytes;
            private IOException failure;

            @Override
            public void read(Path f) {
                try {
                    bytes = Files.readAllBytes(f);
                } catch (IOException e) {
                    failure = e;
                }
            }

            @Override
            public void done() {
                outcome.done(bytes, failure);
            }
        });
    }

    /** Queues {@code read} of {@code file} (after every record queued before it). Worker thread. */
    public void read(Path file, FileRead read) {
        queue.add(new Task(file, null, false, null, read));
    }

    /** Whether the queue takes another request's records (below {@link #MAX_QUEUED_BYTES}). */
    public boolean hasRoom() {
        return queuedBytes.get() < MAX_QUEUED_BYTES;
    }

    /** Queues the removal of {@code key}'s file (after every record queued before it). Worker thread. */
    public void remove(String key, Outcome outcome) {
        removeFile(dir.streamFile(key), outcome);
    }

    /** Queues nothing but {@code outcome}: it runs once everything queued before it has. Worker thread. */
    public void barrier(Outcome outcome) {
        queue.add(new Task(null, null, false, outcome));
    }

    /** Bytes queued and not yet written. */
    public long queuedBytes() {
        return queuedBytes.get();
    }

    /** Batches written: each took one flush of the journal ({@code --fsync batch}) or of each file it touched. */
    public long batches() {
        return batches;
    }

    /** Records written to the files (each acknowledged once its batch is flushed). */
    public long records() {
        return records;
    }

    /** Time spent in the flushes of batches ({@code fdatasync}; the checkpoints' are not counted), nanoseconds. */
    public long flushNanos() {
        return flushNanos;
    }

    private void run() {
        List<Task> batch = new ArrayList<>();
        while (running || !queue.isEmpty()) {
            try {
                Task first = queue.poll(100, java.util.concurrent.TimeUnit.MILLISECONDS);
                if (first == null) {
                    checkpointIfDue(false);
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, 4095);
                write(batch);
            } catch (InterruptedException e) {
                running = false;
            } catch (RuntimeException | Error e) {
                LOG.error("storage writer {} failed", thread.getName(), e);
            }
            batch.clear();
        }
        checkpointIfDue(true);
        closeAll();
        if (journal != null) {
            try {
                journal.close();
            } catch (IOException e) {
                LOG.warn("closing the journal failed: {}", e.toString());
            }
        }
    }

    /**
     * {@code --fsync batch}: flushes every file written (and the folders of those created or removed) since the
     * last checkpoint, then empties the journal, when it is due ({@link #CHECKPOINT_MS}, {@link Journal#MAX_BYTES})
     * or {@code now}. A flush that fails keeps the journal as it is (it still holds those records) and is tried
     * again at the next.
     */
    private void checkpointIfDue(boolean now) {
        if (journal == null || writtenSinceCheckpoint.isEmpty() && entriesSinceCheckpoint.isEmpty()) {
            return;
        }
        long elapsedMs = (System.nanoTime() - checkpointNanos) / 1_000_000;
        if (!now && elapsedMs < CHECKPOINT_MS && journal.size() < Journal.MAX_BYTES) {
            return;
        }
        Map<Path, FileChannel> toFlush = new LinkedHashMap<>();
        List<FileChannel> opened = new ArrayList<>();
        try {
            for (Path p : writtenSinceCheckpoint) {
                OpenFile kept = open.get(p);
                FileChannel ch = kept == null ? null : kept.ch;
                if (ch == null && Files.exists(p)) {
                    ch = FileChannel.open(p, StandardOpenOption.WRITE);
                    opened.add(ch);
                }
                if (ch != null) {
                    toFlush.put(p, ch);
                }
            }
            Map<Path, IOException> failures = flushAll(toFlush);
            if (!failures.isEmpty()) {
                throw failures.values().iterator().next();
            }
            dir.forceDirectories(entriesSinceCheckpoint);
            journal.reset();
            writtenSinceCheckpoint.clear();
            entriesSinceCheckpoint.clear();
            checkpointNanos = System.nanoTime();
        } catch (IOException | RuntimeException e) {
            LOG.warn("checkpoint of {} failed, the journal keeps its records: {}", thread.getName(), e.toString());
        } finally {
            opened.forEach(StoreWriter::closeQuietly);
        }
    }

    /** Writes a batch, flushes what it touched, and hands the outcomes back in order. */
    private void write(List<Task> batch) {
        Map<Task, IOException> failed = new IdentityHashMap<>();
        Map<Path, FileChannel> dirty = new LinkedHashMap<>();
        Map<Path, List<Task>> byFile = new LinkedHashMap<>();
        List<Path> created = new ArrayList<>();
        for (Task t : batch) {
            if (t.file() == null) {
                continue;
            }
            if (t.read() != null) {
                // what this batch wrote before it is in the file already (written, perhaps not yet flushed)
                try {
                    t.read().read(t.file());
                } catch (RuntimeException e) {
                    LOG.error("a read of {} failed", t.file(), e); // its done() still runs: the request is answered
                }
                continue;
            }
            if (t.remove()) {
                OpenFile kept = open.remove(t.file());
                closeQuietly(kept == null ? null : kept.ch);
                dirty.remove(t.file());
                broken.remove(t.file());
                try {
                    long size = Files.exists(t.file()) ? Files.size(t.file()) : 0;
                    if (Files.deleteIfExists(t.file())) {
                        created.add(t.file());
                        usedBytes.addAndGet(-size);
                        if (journal != null) {
                            journal.removed(t.file());
                            writtenSinceCheckpoint.remove(t.file());
                        }
                    }
                } catch (IOException e) {
                    failed.put(t, e);
                }
                continue;
            }
            queuedBytes.addAndGet(-t.frame().length);
            if (broken.contains(t.file())) {
                failed.put(t, new IOException("an earlier write to " + t.file().getFileName() + " failed"));
                continue;
            }
            try {
                boolean isNew = !open.containsKey(t.file()) && !Files.exists(t.file());
                OpenFile file = channel(t.file());
                FileChannel ch = file.ch;
                if (isNew) {
                    created.add(t.file());
                }
                long before = file.size;
                try {
                    ByteBuffer b = ByteBuffer.wrap(t.frame());
                    long at = before;
                    while (b.hasRemaining()) {
                        at += ch.write(b, at);
                    }
                    file.size = at;
                    records = records + 1;
                    usedBytes.addAndGet(t.frame().length);
                    if (fsync == FsyncPolicy.ALWAYS) {
                        long f0 = System.nanoTime();
                        ch.force(false);
                        flushNanos = flushNanos + (System.nanoTime() - f0);
                    }
                    if (journal != null) {
                        journal.written(t.file(), before, t.frame());
                    }
                } catch (IOException e) {
                    fail(t.file(), file, before);
                    throw e;
                }
                dirty.put(t.file(), ch);
                byFile.computeIfAbsent(t.file(), f -> new ArrayList<>()).add(t);
            } catch (IOException e) {
                failed.put(t, e);
            }
        }
        if (journal != null) {
            // one flush for the whole batch: the journal holds every record of it, with where it went
            try {
                long f0 = System.nanoTime();
                journal.force();
                flushNanos = flushNanos + (System.nanoTime() - f0);
                writtenSinceCheckpoint.addAll(dirty.keySet());
                entriesSinceCheckpoint.addAll(created);
            } catch (IOException e) {
                for (Map.Entry<Path, List<Task>> f : byFile.entrySet()) {
                    broken.add(f.getKey());
                    for (Task t : f.getValue()) {
                        failed.put(t, e);
                    }
                }
            }
            created.clear(); // their folders are flushed at the checkpoint; until then the journal stands for them
        }
        if (!created.isEmpty() && fsync != FsyncPolicy.NEVER) {
            try {
                dir.forceDirectories(created); // files created or removed: their folder's entries too
            } catch (IOException e) {
                LOG.warn("flushing the data directory's entries failed: {}", e.toString());
            }
        }
        if (!dirty.isEmpty()) {
            batches = batches + 1;
        }
        List<Task> done = List.copyOf(batch);
        try {
            owner.execute(() -> {
                for (Task t : done) {
                    if (t.read() != null) {
                        t.read().done();
                    } else {
                        t.outcome().done(failed.get(t));
                    }
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the worker has stopped (shutdown): the records are written; nobody waits for the answers
            for (Task t : done) {
                if (t.read() != null) {
                    t.read().abandoned();
                }
            }
        }
    }

    /**
     * Flushes every file written since the last checkpoint ({@code fdatasync}), in parallel on {@link #FLUSHERS} when there are
     * several: a file system commits concurrent flushes together (ext4's journal takes them in one commit), where
     * one after another each waits for its own. Measured on this project's VM, 100 files: 160-230 ms one after
     * another, 21-33 ms at once. Returns the files whose flush failed, with why.
     */
    private static Map<Path, IOException> flushAll(Map<Path, FileChannel> dirty) {
        Map<Path, IOException> failures = new java.util.concurrent.ConcurrentHashMap<>();
        if (dirty.size() == 1) {
            var only = dirty.entrySet().iterator().next();
            try {
                only.getValue().force(false);
            } catch (IOException e) {
                failures.put(only.getKey(), e);
            }
            return failures;
        }
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(dirty.size());
        for (Map.Entry<Path, FileChannel> e : dirty.entrySet()) {
            FLUSHERS.execute(() -> {
                try {
                    e.getValue().force(false);
                } catch (IOException ex) {
                    failures.put(e.getKey(), ex);
                } catch (RuntimeException ex) {
                    failures.put(e.getKey(), new IOException(ex));
                } finally {
                    done.countDown();
                }
            });
        }
        boolean interrupted = false;
        while (true) {
            try {
                done.await();
                break;
            } catch (InterruptedException ex) {
                interrupted = true; // the flushes are under way: their outcome must be known before answering
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return failures;
    }

    /** Threads that flush a batch's files at once, shared by every writer of the process (daemons). */
    private static final java.util.concurrent.ExecutorService FLUSHERS =
            java.util.concurrent.Executors.newFixedThreadPool(FLUSH_THREADS, r -> {
                Thread t = new Thread(r, "iqstream-store-flush");
                t.setDaemon(true);
                return t;
            });

    /** A write failed: the file is cut back to {@code size} and refused from now on. */
    private void fail(Path file, OpenFile open, long size) {
        broken.add(file);
        open.size = size;
        try {
            open.ch.truncate(size);
        } catch (IOException e) {
            LOG.warn("cutting {} back after a failed write failed: {}", file.getFileName(), e.toString());
        }
    }

    private OpenFile channel(Path file) throws IOException {
        OpenFile kept = open.get(file);
        if (kept != null) {
            return kept;
        }
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            kept = new OpenFile(ch);
        } catch (IOException e) {
            closeQuietly(ch);
            throw e;
        }
        open.put(file, kept);
        if (open.size() > maxOpenFiles) {
            var eldest = open.entrySet().iterator().next();
            if (eldest.getValue() != kept) {
                closeQuietly(eldest.getValue().ch);
                open.remove(eldest.getKey());
            }
        }
        return kept;
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing after the batch's flush: nothing left to lose
            }
        }
    }

    private void closeAll() {
        for (OpenFile f : open.values()) {
            closeQuietly(f.ch);
        }
        open.clear();
    }

    /** Writes what is queued, then stops the thread (at shutdown, after the workers have stopped). */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
