package io.iqstream.server.storage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The storage layer of durable streams ({@code --durability disk}): the node's {@link DataDirectory} and one
 * {@link StoreWriter} per worker, each on a thread of its own. A stream's records go through the writer of the
 * worker that owns the stream, so they reach its file in the order the worker made them.
 *
 * <p>Built once at start; any thread.
 */
public final class StreamStore implements AutoCloseable {
    private final DataDirectory dir;
    private final FsyncPolicy fsync;
    private final Map<Executor, StoreWriter> writers = new IdentityHashMap<>();

    private StreamStore(DataDirectory dir, FsyncPolicy fsync, List<? extends Executor> workerLoops) {
        this.dir = dir;
        this.fsync = fsync;
        for (int i = 0; i < workerLoops.size(); i++) {
            writers.put(workerLoops.get(i), new StoreWriter(dir, fsync, workerLoops.get(i), "iqstream-store-" + i));
        }
    }

    /** Opens and locks {@code root} (see {@link DataDirectory#open}) and starts a writer per worker loop. */
    public static StreamStore open(Path root, FsyncPolicy fsync, List<? extends Executor> workerLoops)
            throws IOException {
        return new StreamStore(DataDirectory.open(root), fsync, workerLoops);
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
