package io.iqstream.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The record file's parser against any bytes: it never throws, and whole records written are read back as written;
 * its scanner (a window at a time, from a file) reads exactly the records the parser reads, and fails where it stops.
 */
class RecordFileFuzzTest {
    /** Any bytes parse without throwing, into records that end within the input. */
    @FuzzTest
    void anyBytesParseWithoutThrowing(FuzzedDataProvider data) {
        byte[] bytes = data.consumeRemainingAsBytes();
        RecordFile.Records r = RecordFile.parse(bytes);
        assertTrue(r.wholeBytes() >= 0 && r.wholeBytes() <= bytes.length);
        long sum = 0;
        for (ByteBuffer p : r.payloads()) {
            sum += RecordFile.HEADER_BYTES + p.remaining();
        }
        assertTrue(sum == r.wholeBytes());
    }

    /**
     * Records of any sizes (across the scanner's 64 KiB window, some longer than it), then damage (a byte flipped) or
     * a cut anywhere: the scanner gives the parser's records, in order, with their positions, and fails exactly when
     * the parser stops before the file's end.
     */
    @FuzzTest
    void theScannerReadsWhatTheParserReads(FuzzedDataProvider data) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int n = data.consumeInt(0, 12);
        for (int i = 0; i < n; i++) {
            byte[] p = new byte[data.consumeInt(1, 3 * RecordFile.WINDOW_BYTES / 2)];
            java.util.Arrays.fill(p, data.consumeByte());
            p[0] = (byte) i;
            out.writeBytes(RecordFile.frame(p));
        }
        byte[] bytes = out.toByteArray();
        if (bytes.length > 0 && data.consumeBoolean()) {
            bytes[data.consumeInt(0, bytes.length - 1)] ^= (byte) data.consumeInt(1, 255);
        }
        if (bytes.length > 0 && data.consumeBoolean()) {
            bytes = java.util.Arrays.copyOf(bytes, data.consumeInt(0, bytes.length));
        }
        RecordFile.Records parsed = RecordFile.parse(bytes);
        Path file = Files.createTempFile("scan", ".records");
        try {
            Files.write(file, bytes);
            List<ByteBuffer> scanned = new ArrayList<>();
            List<Long> positions = new ArrayList<>();
            boolean failed = false;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                RecordFile.Scanner scan = new RecordFile.Scanner(ch, 0);
                for (ByteBuffer p = scan.next(); p != null; p = scan.next()) {
                    scanned.add(ByteBuffer.wrap(copy(p)));
                    positions.add(scan.recordPosition());
                }
                assertEquals(bytes.length, scan.position(), "a scan read to the end ends at the file's size");
            } catch (IOException e) {
                failed = true;
            }
            assertEquals(parsed.wholeBytes() < bytes.length, failed, "fails exactly where the parser stops");
            assertEquals(parsed.payloads().size(), scanned.size(), "the same records");
            long at = 0;
            for (int i = 0; i < scanned.size(); i++) {
                assertArrayEquals(copy(parsed.payloads().get(i)), copy(scanned.get(i)), "record " + i);
                assertEquals(at, positions.get(i), "where record " + i + " starts");
                at += RecordFile.HEADER_BYTES + scanned.get(i).remaining();
            }
        } finally {
            Files.delete(file);
        }
    }

    private static byte[] copy(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** Records written, then a torn tail (part of a record, or zeros): every whole record is read back exactly. */
    @FuzzTest
    void wholeRecordsSurviveAnyTornTail(FuzzedDataProvider data) {
        List<byte[]> written = new ArrayList<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int n = data.consumeInt(0, 20);
        for (int i = 0; i < n; i++) {
            byte[] p = data.consumeBytes(data.consumeInt(1, 200));
            if (p.length == 0) {
                p = new byte[] {(byte) i}; // the data ran out: a record's payload is never empty
            }
            written.add(p);
            out.writeBytes(RecordFile.frame(p));
        }
        byte[] frame = n > 0 ? RecordFile.frame(written.get(n - 1)) : new byte[0];
        int keep = frame.length == 0 ? 0 : data.consumeInt(0, frame.length - 1);
        if (data.consumeBoolean()) {
            out.writeBytes(java.util.Arrays.copyOf(frame, keep)); // a partial copy of a record: what a crash leaves
        } else {
            out.writeBytes(new byte[data.consumeInt(0, 8192)]); // or zeros: a file made longer than what was written
        }
        RecordFile.Records r = RecordFile.parse(out.toByteArray());
        assertTrue(r.payloads().size() == n, "every whole record, and not the torn one");
        assertTrue(!r.damaged(), "a torn tail is no damage (it is cut, not kept as it is)");
        for (int i = 0; i < n; i++) {
            byte[] got = new byte[r.payloads().get(i).remaining()];
            r.payloads().get(i).duplicate().get(got);
            assertArrayEquals(written.get(i), got);
        }
    }
}
