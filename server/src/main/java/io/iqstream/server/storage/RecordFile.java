package io.iqstream.server.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The format of a file of records: each record is its payload's length (4 bytes, big-endian), the CRC-32C of the
 * payload (4 bytes) and the payload, which is never empty. Nothing else: no header, no index. A file is only ever
 * appended to, so a crash can leave at most one partial record, at its end, or a tail of zeros (a file system that
 * made the file longer before its data reached the disk); reading stops at the first record that is short, empty
 * or whose checksum does not match. What starts there is a <em>torn tail</em> when it is what a crash leaves — a
 * record that runs to or past the file's end, or one followed only by zeros — and {@link #recover} cuts the file
 * back to the last whole record; anything else (a bad record with more data after it: a flipped byte, a file
 * overwritten) is <em>damage</em>, and the file is left as it is, for its owner to answer an error, never to serve
 * part of it as if it were whole. (An empty payload's checksum is 0: were empty records allowed, eight zero bytes
 * would be one, and a zero-filled tail would read as hundreds of them.) A flipped byte in the last record, or in a
 * length that then points past the end, reads as a torn tail.
 *
 * <p>Why by hand and not an embedded engine: a stream's file is exactly the appends it acknowledged, in order, and
 * recovery is a scan that keeps the whole ones — Kafka's and Electric's segment files, with no compaction, no
 * second copy of the bytes and no dependency. {@code RecordFileFuzzTest} cuts and corrupts files at random.
 *
 * <p>Stateless; any thread.
 */
public final class RecordFile {
    /** Length and checksum before each payload. */
    public static final int HEADER_BYTES = 8;
    /** The largest payload a record may have (a stream's message is at most 64 MiB; its record a little more). */
    public static final int MAX_PAYLOAD_BYTES = (64 << 20) + (1 << 20);

    private RecordFile() {}

    /** {@code payload} as a record: length, checksum, bytes. The payload is not empty. */
    public static byte[] frame(byte[] payload) {
        if (payload.length == 0) {
            throw new IllegalArgumentException("a record's payload is never empty (eight zero bytes are no record)");
        }
        byte[] out = new byte[HEADER_BYTES + payload.length];
        ByteBuffer b = ByteBuffer.wrap(out);
        b.putInt(payload.length);
        b.putInt(crc(payload, 0, payload.length));
        b.put(payload);
        return out;
    }

    private static int crc(byte[] bytes, int offset, int length) {
        CRC32C c = new CRC32C();
        c.update(bytes, offset, length);
        return (int) c.getValue();
    }

    /**
     * The whole records of a file's bytes, where the last one ends, and whether what follows is damage rather than a
     * torn tail (nothing follows, or a crash's leftovers).
     */
    public record Records(List<ByteBuffer> payloads, int wholeBytes, boolean damaged) {}

    /**
     * Where the record of {@code payload} starts in its file: for a payload that {@link #parse} or {@link #recover}
     * gave (a slice of the file's bytes).
     */
    public static long positionOf(ByteBuffer payload) {
        return payload.arrayOffset() - HEADER_BYTES;
    }

    /** Parses {@code bytes}: every whole, checksummed record from the start, stopping at the first that is not. */
    public static Records parse(byte[] bytes) {
        List<ByteBuffer> payloads = new ArrayList<>();
        int at = 0;
        while (bytes.length - at >= HEADER_BYTES) {
            ByteBuffer head = ByteBuffer.wrap(bytes, at, HEADER_BYTES);
            int length = head.getInt();
            int sum = head.getInt();
            if (length <= 0 || length > MAX_PAYLOAD_BYTES || length > bytes.length - at - HEADER_BYTES
                    || crc(bytes, at + HEADER_BYTES, length) != sum) {
                break;
            }
            payloads.add(ByteBuffer.wrap(bytes, at + HEADER_BYTES, length).slice());
            at += HEADER_BYTES + length;
        }
        return new Records(payloads, at, !tornTail(bytes, at));
    }

    /**
     * Whether the bytes from {@code at} (where the whole records end) are what a crash leaves at the end of a file
     * only ever appended to: nothing, part of a header, a record that runs to or past the end, or a record (of any
     * length its header says, or a header alone when that length is not one) followed by zeros only.
     */
    private static boolean tornTail(byte[] bytes, int at) {
        if (bytes.length - at < HEADER_BYTES) {
            return true;
        }
        int length = ByteBuffer.wrap(bytes, at, 4).getInt();
        long end = at + HEADER_BYTES + (length > 0 && length <= MAX_PAYLOAD_BYTES ? (long) length : 0);
        for (long i = end; i < bytes.length; i++) {
            if (bytes[(int) i] != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Reads a file's records one at a time from a file position, each checked as {@link #parse} checks it, through a
     * window of {@link #WINDOW_BYTES} (or one record, when a record is longer): a read of a few records of a long
     * file never holds the file. For files whose torn tail {@link #recover} has cut already (a stream file while
     * its server runs): a record that is short, empty or fails its checksum is an {@link IOException}.
     *
     * <p>One per read; one thread.
     */
    public static final class Scanner {
        private final FileChannel ch;
        private final long size;
        private ByteBuffer window = ByteBuffer.allocate(WINDOW_BYTES).limit(0);
        /** The file position of the window's first byte. */
        private long windowAt;
        private long recordAt = -1;
        private final CRC32C crc = new CRC32C();

        /** A scan of {@code ch} (its size now) from {@code from}, which is where a record starts. */
        public Scanner(FileChannel ch, long from) throws IOException {
            this.ch = ch;
            this.size = ch.size();
            this.windowAt = from;
        }

        /** Where the next record starts (the file's size after the last one). */
        public long position() {
            return windowAt + window.position();
        }

        /** Where the record {@link #next} gave last starts. */
        public long recordPosition() {
            return recordAt;
        }

        /**
         * The next record's payload, valid until the next call; null at the file's end. An {@link IOException}
         * when the record there is not whole and checked (the read stops there).
         */
        public ByteBuffer next() throws IOException {
            long at = position();
            if (at >= size) {
                return null;
            }
            fill(HEADER_BYTES, at);
            int length = window.getInt(window.position());
            int sum = window.getInt(window.position() + 4);
            if (length <= 0 || length > MAX_PAYLOAD_BYTES || length > size - at - HEADER_BYTES) {
                throw new IOException("no whole record at byte " + at + " of the file (" + size + " bytes)");
            }
            fill(HEADER_BYTES + length, at);
            ByteBuffer payload = window.slice(window.position() + HEADER_BYTES, length);
            crc.reset();
            crc.update(payload.duplicate());
            if ((int) crc.getValue() != sum) {
                throw new IOException("the record at byte " + at + " of the file fails its checksum");
            }
            recordAt = at;
            window.position(window.position() + HEADER_BYTES + length);
            return payload;
        }

        /** Makes the window hold {@code bytes} from file position {@code at} (the window's position). */
        private void fill(int bytes, long at) throws IOException {
            if (window.remaining() >= bytes) {
                return;
            }
            if (window.capacity() < bytes) {
                ByteBuffer larger = ByteBuffer.allocate(bytes);
                larger.put(window);
                window = larger;
            } else {
                window.compact();
            }
            windowAt = at;
            // the window is now in write mode, holding what it had from `at`
            while (window.position() < bytes) {
                int n = ch.read(window, windowAt + window.position());
                if (n < 0) {
                    throw new IOException("the file ends at byte " + (windowAt + window.position())
                            + " inside a record");
                }
            }
            window.flip();
        }
    }

    /**
     * The first record's payload of {@code file} (a copy), read through a {@link Scanner} (a window, not the file);
     * null when the file has none that is whole.
     */
    public static ByteBuffer firstRecord(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer p = new Scanner(ch, 0).next();
            if (p == null) {
                return null;
            }
            ByteBuffer copy = ByteBuffer.allocate(p.remaining());
            copy.put(p).flip();
            return copy;
        } catch (IOException e) {
            if (!Files.exists(file)) {
                throw e;
            }
            return null; // not whole: what recovery finds in it is said there
        }
    }

    /** What a {@link Scanner} reads at a time (less when the file ends first). */
    public static final int WINDOW_BYTES = 64 * 1024;

    /**
     * What {@link #recover} found in one file: its whole records, the bytes of a torn tail it cut, and where damage
     * starts ({@code -1}: none; the file was then not cut).
     */
    public record Recovered(Path path, List<ByteBuffer> payloads, long cutBytes, long damagedAt) {}

    /**
     * Reads the file's whole records and cuts it back to the last one when the rest is a torn tail (never served);
     * {@link Recovered#cutBytes} says how much was cut. A damaged file is not cut: {@link Recovered#damagedAt}.
     */
    public static Recovered recover(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        Records r = parse(bytes);
        if (r.damaged()) {
            return new Recovered(file, r.payloads(), 0, r.wholeBytes());
        }
        long cut = bytes.length - r.wholeBytes();
        if (cut > 0) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(r.wholeBytes());
                ch.force(true);
            }
        }
        return new Recovered(file, r.payloads(), cut, -1);
    }
}
