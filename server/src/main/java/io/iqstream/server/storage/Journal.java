package io.iqstream.server.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A writer's journal ({@code --fsync batch}): every record a batch writes to the files of the data directory is
 * also appended here, with the file and the offset it went to, and this one file is flushed once per batch — one
 * {@code fdatasync} per batch, however many streams it touched, where flushing each file took one per file (100
 * streams: 100 flushes a batch; the benchmark's disk rows fell behind at K = 100). The files themselves are
 * flushed at a checkpoint ({@link StoreWriter}: every {@value StoreWriter#CHECKPOINT_MS} ms or
 * {@value #MAX_BYTES} bytes of journal), after which the journal starts empty again.
 *
 * <p>After a crash, {@link #replay} writes every journaled record back at its offset (and makes every journaled
 * removal again) before anything reads the files: whatever of the last moments the page cache lost, every record
 * whose write was acknowledged is in its file again, in place. A torn tail of the journal itself (a batch whose
 * flush never finished, so never acknowledged) is cut as any record file's is.
 *
 * <p>The format is {@link RecordFile}'s; each payload is a kind byte ({@code 1}: a record written, {@code 2}: a file
 * removed), the file's path inside the data directory (a 2-byte length and UTF-8), and for a record the offset it
 * was written at (8 bytes) and its bytes. Written by one {@link StoreWriter}'s thread only.
 */
final class Journal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
    /** The journal is checkpointed (the files flushed, the journal emptied) once it holds this many bytes. */
    static final long MAX_BYTES = 64L << 20;
    static final String FOLDER = "journal";
    private static final byte WRITTEN = 1;
    private static final byte REMOVED = 2;

    private final Path root;
    private final FileChannel ch;
    /** Bytes written to the journal's file. */
    private long size;
    /** Entries added since the last {@link #force}, written by it in one gathering write. */
    private final java.util.ArrayList<ByteBuffer> pending = new java.util.ArrayList<>();
    private long pendingBytes;

    private Journal(Path root, FileChannel ch) throws IOException {
        this.root = root;
        this.ch = ch;
        this.size = ch.size();
    }

    /** Opens (creating) the journal {@code name} of the data directory {@code root}; after {@link #replay}. */
    static Journal open(Path root, String name) throws IOException {
        Path folder = root.resolve(FOLDER);
        Files.createDirectories(folder);
        return new Journal(root, FileChannel.open(folder.resolve(name + ".log"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE));
    }

    /** Bytes in the journal now, with the entries not yet written. */
    long size() {
        return size + pendingBytes;
    }

    /** Adds the entry for {@code frame} written to {@code file} at {@code offset} (not flushed: {@link #force}). */
    void written(Path file, long offset, byte[] frame) {
        byte[] name = root.relativize(file).toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(1 + 2 + name.length + 8 + frame.length);
        b.put(WRITTEN).putShort((short) name.length).put(name).putLong(offset).put(frame);
        add(b.array());
    }

    /** Adds the entry for {@code file}'s removal (not flushed: {@link #force}). */
    void removed(Path file) {
        byte[] name = root.relativize(file).toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(1 + 2 + name.length);
        b.put(REMOVED).putShort((short) name.length).put(name);
        add(b.array());
    }

    /** Adds one entry, written and flushed with the rest of its batch by {@link #force}. */
    private void add(byte[] payload) {
        byte[] frame = RecordFile.frame(payload);
        pending.add(ByteBuffer.wrap(frame));
        pendingBytes += frame.length;
    }

    /**
     * Writes the entries added (one gathering write for the batch, not one a record) and flushes them: what they
     * stand for is durable once this returns. A write or flush that fails is cut back, so the next batch follows the
     * last whole entry and no torn entry sits in the middle of the journal (replay stops at the first).
     */
    void force() throws IOException {
        if (!pending.isEmpty()) {
            ByteBuffer[] all = pending.toArray(new ByteBuffer[0]);
            pending.clear();
            long bytes = pendingBytes;
            pendingBytes = 0;
            try {
                ch.position(size);
                long written = 0;
                while (written < bytes) {
                    written += ch.write(all);
                }
            } catch (IOException e) {
                try {
                    ch.truncate(size);
                } catch (IOException cut) {
                    e.addSuppressed(cut);
                }
                throw e;
            }
            size += bytes;
        }
        ch.force(false);
    }

    /** Empties the journal (after a checkpoint flushed every file it covered). */
    void reset() throws IOException {
        ch.truncate(0);
        ch.force(true);
        size = 0;
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }

    /**
     * Makes every journal of {@code root} true of its files: each record written again at its offset, each
     * removal made again, in the order journaled; the files flushed, then the journals emptied. At start, before
     * anything reads the files. Returns how many entries were replayed.
     */
    static int replay(Path root) throws IOException {
        Path folder = root.resolve(FOLDER);
        if (!Files.isDirectory(folder)) {
            return 0;
        }
        List<Path> journals;
        try (Stream<Path> all = Files.list(folder)) {
            journals = all.filter(p -> p.getFileName().toString().endsWith(".log")).sorted().toList();
        }
        // every entry in order, then: a record written to a file removed later is not written again (its space
        // may be what a later file took), and only a file's last removal is made again
        record Entry(byte kind, Path file, long offset, ByteBuffer bytes) {}
        List<Entry> all = new java.util.ArrayList<>();
        java.util.Map<Path, Integer> lastRemoval = new java.util.HashMap<>();
        for (Path j : journals) {
            RecordFile.Recovered r = RecordFile.recover(j);
            if (r.cutBytes() > 0) {
                LOG.warn("journal {}: cut {} bytes of a torn tail (a batch never acknowledged)", j.getFileName(),
                        r.cutBytes());
            }
            if (r.damagedAt() >= 0) {
                LOG.error("journal {}: damaged at byte {} (more data after a record that is not whole: not a crash's"
                        + " torn tail); the entries before it are replayed, none after (the files they name are"
                        + " checked at their own recovery)", j.getFileName(), r.damagedAt());
            }
            for (ByteBuffer e : r.payloads()) {
                byte kind = e.get();
                byte[] name = new byte[e.getShort() & 0xffff];
                e.get(name);
                Path file = root.resolve(new String(name, StandardCharsets.UTF_8)).normalize();
                if (!file.startsWith(root.normalize()) || file.getParent() == null) {
                    throw new IOException("journal " + j.getFileName() + " names a file outside the data directory");
                }
                if (kind == REMOVED) {
                    lastRemoval.put(file, all.size());
                    all.add(new Entry(kind, file, 0, null));
                } else if (kind == WRITTEN) {
                    all.add(new Entry(kind, file, e.getLong(), e.slice()));
                } else {
                    throw new IOException("journal " + j.getFileName() + ": an entry of unknown kind " + kind);
                }
            }
        }
        Set<Path> touched = new LinkedHashSet<>();
        for (int i = 0; i < all.size(); i++) {
            Entry e = all.get(i);
            int removedAt = lastRemoval.getOrDefault(e.file(), -1);
            if (e.kind() == REMOVED && i == removedAt) {
                Files.deleteIfExists(e.file());
                touched.remove(e.file());
                touched.add(e.file().getParent());
            } else if (e.kind() == WRITTEN && i > removedAt) {
                try (FileChannel f = FileChannel.open(e.file(), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                    ByteBuffer b = e.bytes();
                    long at = e.offset();
                    while (b.hasRemaining()) {
                        at += f.write(b, at);
                    }
                }
                touched.add(e.file());
                touched.add(e.file().getParent());
            }
        }
        int entries = all.size();
        for (Path p : touched) {
            if (Files.exists(p)) {
                try (FileChannel f = FileChannel.open(p, StandardOpenOption.READ)) {
                    f.force(true);
                }
            }
        }
        for (Path j : journals) {
            try (FileChannel f = FileChannel.open(j, StandardOpenOption.WRITE)) {
                f.truncate(0);
                f.force(true);
            }
        }
        return entries;
    }
}
