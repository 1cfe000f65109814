package io.iqstream.server.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * A node's data directory ({@code --data-dir}): {@code streams/} holds one record file per durable stream, named by
 * a hash of the stream's path (paths are long and hold {@code /}; the path itself is in the file's first record),
 * and {@code lock} is held while a server uses it, so two servers never write one directory.
 *
 * <p>Any thread; the files themselves are written by {@link StoreWriter}s only.
 */
public final class DataDirectory implements AutoCloseable {
    private static final String SUFFIX = ".log";

    private final Path root;
    private final Path streams;
    private final Path runs;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private DataDirectory(Path root, Path streams, Path runs, FileChannel lockChannel, FileLock lock) {
        this.root = root;
        this.streams = streams;
        this.runs = runs;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /**
     * Opens (creating it when missing) the data directory at {@code root} and locks it; an IOException names what
     * failed (not writable, or held by another server).
     */
    public static DataDirectory open(Path root) throws IOException {
        Path streams = root.resolve("streams");
        Files.createDirectories(streams);
        Path runs = root.resolve("runs");
        Files.createDirectories(runs);
        FileChannel ch = FileChannel.open(root.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        if (lock == null) {
            ch.close();
            throw new IOException("another server holds " + root.resolve("lock") + ": one data directory per node");
        }
        return new DataDirectory(root, streams, runs, ch, lock);
    }

    public Path root() {
        return root;
    }

    /** The file that holds the stream whose key (its path) is {@code key}. */
    public Path streamFile(String key) {
        return streams.resolve(fileName(key));
    }

    /** The file that holds the ended run whose id is {@code runId} (written once, when it ended). */
    public Path runFile(String runId) {
        return runs.resolve(fileName(runId));
    }

    /** A stream's file name: the first 128 bits of the SHA-256 of its key, in hex. */
    static String fileName(String key) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash, 0, 16) + SUFFIX;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** What a recovery does with each file, in turn: its records are dropped once it returns. */
    public interface Recovering {
        void recovered(RecordFile.Recovered file) throws IOException;
    }

    /**
     * Recovers every stream file ({@link RecordFile#recover}: torn tails cut) and hands each to {@code each}, one
     * at a time, in file-name order: a start holds one file's records at a time, never the whole directory (which
     * may be far larger than the heap). At start, before serving.
     */
    public void recoverStreams(Recovering each) throws IOException {
        recover(streams, each);
    }

    /** Every ended run's file, recovered as {@link #recoverStreams} does; at start, before serving. */
    public void recoverRuns(Recovering each) throws IOException {
        recover(runs, each);
    }

    /** Every stream file's path, in file-name order. */
    public List<Path> streamFiles() throws IOException {
        return files(streams);
    }

    private static List<Path> files(Path folder) throws IOException {
        try (Stream<Path> all = Files.list(folder)) {
            return all.filter(p -> p.getFileName().toString().endsWith(SUFFIX)).sorted().toList();
        }
    }

    private static void recover(Path folder, Recovering each) throws IOException {
        for (Path f : files(folder)) {
            each.recovered(RecordFile.recover(f));
        }
    }

    /** Bytes of every stream and run file now. */
    public long streamBytes() throws IOException {
        return bytesOf(streams) + bytesOf(runs);
    }

    private static long bytesOf(Path folder) throws IOException {
        try (Stream<Path> all = Files.list(folder)) {
            long total = 0;
            for (Path p : (Iterable<Path>) all::iterator) {
                total += Files.size(p);
            }
            return total;
        }
    }

    /** Flushes the entries (a file created or removed) of the folders that hold {@code files} to the disk. */
    void forceDirectories(Iterable<Path> files) throws IOException {
        java.util.Set<Path> folders = new java.util.HashSet<>();
        for (Path f : files) {
            folders.add(f.getParent());
        }
        for (Path folder : folders) {
            try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
                dir.force(true);
            }
        }
    }

    @Override
    public void close() throws IOException {
        lock.release();
        lockChannel.close();
    }
}
