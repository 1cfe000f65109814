package io.iqstream.server.storage;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The storage layer of durable streams ({@code --durability disk}): the node's {@link DataDirectory} and one
 * {@link StoreWriter} per worker, each on a thread of its own. A stream's records go through the writer of the
 * worker that owns the stream, so they reach its file in the order the worker made them.
 *
 * <p>Built once at start; any thread.
 */
public final class StreamStore implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StreamStore.class);
    private final DataDirectory dir;
    private final FsyncPolicy fsync;
    private final Map<Executor, StoreWriter> writers = new IdentityHashMap<>();

    private final AtomicLong usedBytes;
    private final long budgetBytes;

    private StreamStore(DataDirectory dir, FsyncPolicy fsync, List<? extends Executor> workerLoops, long usedBytes,
            long budgetBytes, int openFilesPerWriter) throws IOException {
        this.dir = dir;
        this.fsync = fsync;
        this.usedBytes = new AtomicLong(usedBytes);
        this.budgetBytes = budgetBytes;
        for (int i = 0; i < workerLoops.size(); i++) {
            writers.put(workerLoops.get(i), new StoreWriter(dir, fsync, workerLoops.get(i), "iqstream-store-" + i,
                    this.usedBytes, openFilesPerWriter));
        }
    }

    /**
     * Opens and locks {@code root} (see {@link DataDirectory#open}) and starts a writer per worker loop. A
     * {@code diskBudgetBytes} of 0 means: what the files take now plus the file system's free space, less a margin
     * ({@link #MARGIN_SHARE} of its size, at least {@link #MIN_MARGIN_BYTES}). Each writer keeps at most
     * {@code openFilesPerWriter} files open ({@link StoreWriter#openFilesFor}).
     */
    public static StreamStore open(Path root, FsyncPolicy fsync, List<? extends Executor> workerLoops,
            long diskBudgetBytes, int openFilesPerWriter) throws IOException {
        DataDirectory dir = DataDirectory.open(root);
        try {
            // what the journals hold goes back into the files first: the files may have lost the last moments
            // before a crash of the machine, the journals (flushed per batch) did not
            int replayed = Journal.replay(dir.root());
            if (replayed > 0) {
                LOG.info("data directory {}: {} journaled writes replayed into their files", root, replayed);
            }
            long used = dir.streamBytes();
            long budget = diskBudgetBytes;
            if (budget <= 0) {
                FileStore fs = Files.getFileStore(root);
                long margin = Math.max(MIN_MARGIN_BYTES, (long) (fs.getTotalSpace() * MARGIN_SHARE));
                budget = Math.max(0, used + fs.getUsableSpace() - margin);
            }
            return new StreamStore(dir, fsync, workerLoops, used, budget, openFilesPerWriter);
        } catch (IOException | RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /** The share of the file system kept free by the default disk budget. */
    public static final double MARGIN_SHARE = 0.05;
    /** The least the default disk budget keeps free. */
    public static final long MIN_MARGIN_BYTES = 64L << 20;

    /** Bytes the stream files take now (written, not counting what is queued). */
    public long usedBytes() {
        return usedBytes.get();
    }

    /** What the stream files may take ({@code --disk-budget}). */
    public long budgetBytes() {
        return budgetBytes;
    }

    /** Batches written by every writer ({@link StoreWriter#batches}). */
    public long batches() {
        return writers.values().stream().mapToLong(StoreWriter::batches).sum();
    }

    /** Records written by every writer. */
    public long records() {
        return writers.values().stream().mapToLong(StoreWriter::records).sum();
    }

    /** Time every writer spent flushing its batches, nanoseconds. */
    public long flushNanos() {
        return writers.values().stream().mapToLong(StoreWriter::flushNanos).sum();
    }

    /** Bytes queued for every writer and not yet written. */
    public long queuedBytes() {
        return writers.values().stream().mapToLong(StoreWriter::queuedBytes).sum();
    }

    /** Whether the stream files have reached the disk budget: new streams and appends are refused (507). */
    public boolean isFull() {
        return usedBytes.get() >= budgetBytes;
    }

    public DataDirectory directory() {
        return dir;
    }

    public FsyncPolicy fsync() {
        return fsync;
    }

    /** The writer of the worker whose loop is {@code loop}. */
    public StoreWriter writer(Executor loop) {
        StoreWriter w = writers.get(loop);
        if (w == null) {
            throw new IllegalArgumentException("not a worker loop: " + loop);
        }
        return w;
    }

    /** Writes what is queued, stops the writers and unlocks the directory (at shutdown, after the workers). */
    @Override
    public void close() throws IOException {
        for (StoreWriter w : writers.values()) {
            w.close();
        }
        dir.close();
    }
}
