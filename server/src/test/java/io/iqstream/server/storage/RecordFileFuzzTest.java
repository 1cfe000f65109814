package io.iqstream.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** The record file's parser against any bytes: it never throws, and whole records written are read back as written. */
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
