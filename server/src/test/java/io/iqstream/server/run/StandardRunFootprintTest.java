package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bytes one WORKLOAD.md run costs kept in full, as the budget charges them ({@link RunLog#heldBytes()}): its
 * log (segments, packed or plain), its index and the fixed per-segment and per-run heap charges. The figures are
 * the ones docs/OPERATIONS.md ("What a run costs") quotes, asserted within {@link #TOLERANCE} (the run is seeded,
 * so they only move when the log, the packing or the charges change — then the doc changes with them).
 */
class StandardRunFootprintTest {
    /** docs/OPERATIONS.md: held while streaming, at its largest. */
    static final double DOC_STREAMING_KIB = 24.5;
    /** docs/OPERATIONS.md: held once ended. */
    static final double DOC_ENDED_KIB = 15.1;
    /** docs/OPERATIONS.md: the same run with {@code --compress-log false}, once ended. */
    static final double DOC_PLAIN_ENDED_KIB = 83.1;
    /** How far a measured figure may be from the documented one: 5 %, either way. */
    static final double TOLERANCE = 0.05;

    @Test
    void standardRunFitsTheTargetWhileStreamingAndOnceEnded() {
        List<String> events = StandardRun.events(42);
        assertEquals(429, events.size());
        SegmentCodec codec = new SegmentCodec(PooledByteBufAllocator.DEFAULT);
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT, codec);
        long worstInFlight = 0;
        long jsonBytes = 0;
        for (String e : events) {
            ByteBuf b = Unpooled.copiedBuffer(e, StandardCharsets.UTF_8);
            jsonBytes += b.readableBytes();
            log.append(b);
            b.release();
            log.takeFreedBytes();
            worstInFlight = Math.max(worstInFlight, log.heldBytes());
        }
        long frames = log.frameBytes();
        log.seal();
        long ended = log.heldBytes();
        System.out.printf("standard run: %d events, %d B of event JSON, %d B of SSE frames; held while streaming"
                + " (worst): %.1f KiB; held once ended: %.1f KiB%n", events.size(), jsonBytes, frames,
                worstInFlight / 1024.0, ended / 1024.0);
        assertNearDoc("held while streaming", DOC_STREAMING_KIB, worstInFlight);
        assertNearDoc("held once ended", DOC_ENDED_KIB, ended);
        // and nothing is lost by packing: every frame reads back exactly, from any id
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < events.size(); i++) {
            expected.append("id: ").append(i + 1).append("\ndata: ").append(events.get(i)).append("\n\n");
        }
        for (int from : new int[] {1, 57, 200, 383, 429}) {
            StringBuilder got = new StringBuilder();
            long id = from;
            while (id <= log.size()) {
                ByteBuf s = log.readFrom(id);
                got.append(s.toString(StandardCharsets.UTF_8));
                s.release();
                id = log.lastIdInSegmentOf(id) + 1;
            }
            String all = expected.toString();
            assertEquals(all.substring(all.indexOf("id: " + from + "\n")), got.toString(), "from " + from);
        }
        log.release();
        codec.close();
    }

    /** Fails unless {@code bytes} is within {@link #TOLERANCE} of {@code docKib} KiB. */
    static void assertNearDoc(String what, double docKib, long bytes) {
        double kib = bytes / 1024.0;
        assertTrue(Math.abs(kib - docKib) <= docKib * TOLERANCE, String.format("%s: %.1f KiB, but docs/OPERATIONS.md"
                + " says %.1f KiB (tolerance %.0f %%): change the doc with the code", what, kib, docKib,
                TOLERANCE * 100));
    }

    @Test
    void plainLogKeepsTheSameFrames() {
        List<String> events = StandardRun.events(7);
        RunLog log = new RunLog(PooledByteBufAllocator.DEFAULT);
        for (String e : events) {
            ByteBuf b = Unpooled.copiedBuffer(e, StandardCharsets.UTF_8);
            log.append(b);
            b.release();
        }
        log.seal();
        System.out.printf("standard run without packing, once ended: %.1f KiB%n",
                (log.heldBytes()) / 1024.0);
        // one buffer for the frames, charged at the pool's size class for them (a quarter above them at most)
        assertTrue(log.capacityBytes() >= log.frameBytes() && log.capacityBytes() <= log.frameBytes() * 5 / 4,
                log.capacityBytes() + " B charged for " + log.frameBytes() + " B of frames");
        assertNearDoc("held once ended without packing", DOC_PLAIN_ENDED_KIB, log.heldBytes());
        log.release();
    }
}
