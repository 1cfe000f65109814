package io.iqstream.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The record file format: a file cut at any offset keeps exactly the records wholly before the cut; a corrupt byte
 * ends the file at the record before it; {@link RecordFile#recover} cuts the file back on the disk.
 */
class RecordFileTest {
    private static List<byte[]> payloads(Random random, int n) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] p = new byte[1 + random.nextInt(i % 7 == 0 ? 3000 : 40)];
            random.nextBytes(p);
            out.add(p);
        }
        return out;
    }

    private static byte[] file(List<byte[]> payloads, List<Integer> ends) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : payloads) {
            out.writeBytes(RecordFile.frame(p));
            ends.add(out.size());
        }
        return out.toByteArray();
    }

    @Test
    void aFileCutAtEveryOffsetKeepsTheWholeRecordsBeforeTheCut() {
        Random random = new Random(42);
        List<byte[]> payloads = payloads(random, 60);
        List<Integer> ends = new ArrayList<>();
        byte[] whole = file(payloads, ends);
        for (int cut = 0; cut <= whole.length; cut++) {
            byte[] part = java.util.Arrays.copyOf(whole, cut);
            RecordFile.Records r = RecordFile.parse(part);
            int expected = 0;
            while (expected < ends.size() && ends.get(expected) <= cut) {
                expected++;
            }
            assertEquals(expected, r.payloads().size(), "cut at " + cut);
            assertEquals(expected == 0 ? 0 : ends.get(expected - 1), r.wholeBytes(), "cut at " + cut);
            for (int i = 0; i < expected; i++) {
                assertArrayEquals(payloads.get(i), bytes(r.payloads().get(i)), "record " + i + ", cut at " + cut);
            }
        }
    }

    /**
     * A flipped byte ends the records at the one before it; with records after it, it is damage (the file is left
     * as it is), in the last record a torn tail.
     */
    @Test
    void aCorruptByteEndsTheFileAtTheRecordBeforeIt() {
        Random random = new Random(7);
        List<byte[]> payloads = payloads(random, 30);
        List<Integer> ends = new ArrayList<>();
        byte[] whole = file(payloads, ends);
        for (int trial = 0; trial < 2000; trial++) {
            byte[] damaged = whole.clone();
            int at = random.nextInt(damaged.length);
            damaged[at] ^= (byte) (1 + random.nextInt(255));
            RecordFile.Records r = RecordFile.parse(damaged);
            int record = 0;
            while (ends.get(record) <= at) {
                record++;
            }
            assertEquals(record, r.payloads().size(), "a byte flipped at " + at + " (in record " + record + ")");
            int start = record == 0 ? 0 : ends.get(record - 1);
            if (at - start >= 4) { // its checksum or payload, not its length
                // more records after it: damage, never cut; in the last record: what a torn write may leave
                assertEquals(record < ends.size() - 1, r.damaged(), "a byte flipped at " + at + " in record "
                        + record + " of " + ends.size());
            }
        }
    }

    /**
     * A tail of zeros (a file system that made the file longer before its data reached the disk) is no record: an
     * empty payload's checksum is 0, so records are never empty and eight zero bytes end the file as a torn tail.
     */
    @Test
    void aTailOfZerosEndsTheFileAndNoRecordIsEmpty() {
        List<Integer> ends = new ArrayList<>();
        byte[] whole = file(payloads(new Random(5), 4), ends);
        for (int zeros : new int[] {8, 9, 4096}) {
            byte[] padded = java.util.Arrays.copyOf(whole, whole.length + zeros);
            RecordFile.Records r = RecordFile.parse(padded);
            assertEquals(4, r.payloads().size(), zeros + " zeros after the records");
            assertEquals(whole.length, r.wholeBytes(), zeros + " zeros after the records");
        }
        assertThrows(IllegalArgumentException.class, () -> RecordFile.frame(new byte[0]));
    }

    @Test
    void recoverCutsATornTailOnTheDisk(@TempDir Path dir) throws Exception {
        List<byte[]> payloads = payloads(new Random(3), 5);
        List<Integer> ends = new ArrayList<>();
        byte[] whole = file(payloads, ends);
        Path f = dir.resolve("s.log");
        Files.write(f, java.util.Arrays.copyOf(whole, ends.get(3) + 5));
        RecordFile.Recovered r = RecordFile.recover(f);
        assertEquals(4, r.payloads().size());
        assertEquals(5, r.cutBytes());
        assertEquals(ends.get(3), (int) Files.size(f), "cut back on the disk");
        assertTrue(RecordFile.recover(f).cutBytes() == 0, "a second recovery finds nothing to cut");
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
