package io.iqstream.server.stream;

import java.util.Arrays;

/**
 * Where a cold stream's messages lie in its file ({@link DurableStream#coldIndex}): pairs of a byte position of the
 * stream and the file position of the record that starts there, the file's start first, then one pair per
 * {@link #STRIDE_BYTES} of messages at most, so a read of the page after any offset scans at most that much before
 * it ({@link ColdRead}). Built by recovery from the records it reads, or by the first read of a stream gone cold
 * since; kept as a plain {@code long[]}.
 *
 * <p>Stateless but for a {@link Builder}, which is one scan's.
 */
final class ColdIndex {
    /** Messages between two entries, at most. */
    static final int STRIDE_BYTES = 64 * 1024;

    private ColdIndex() {}

    /** Collects the entries of one scan of a file, record by record from its start. */
    static final class Builder {
        private long[] entries = {0, 0};
        private int size = 2;
        private long lastEntry;

        /**
         * A message record at {@code filePosition}, where the stream's bytes before it are {@code position}: an
         * entry when a stride's messages lie between it and the last entry.
         */
        void message(long position, long filePosition) {
            if (position - lastEntry < STRIDE_BYTES) {
                return;
            }
            if (size == entries.length) {
                entries = Arrays.copyOf(entries, size * 2);
            }
            entries[size++] = position;
            entries[size++] = filePosition;
            lastEntry = position;
        }

        long[] build() {
            return Arrays.copyOf(entries, size);
        }
    }

    /** The entry (its index in {@code index}) at which a read of the messages after {@code position} starts. */
    static int entryFor(long[] index, long position) {
        int e = 0;
        while (e + 2 < index.length && index[e + 2] <= position) {
            e += 2;
        }
        return e;
    }

    /** What an index costs on the heap. */
    static long bytes(long[] index) {
        return 16 + 8L * index.length;
    }
}
