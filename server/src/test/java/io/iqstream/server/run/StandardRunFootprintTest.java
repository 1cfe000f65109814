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
 * log (segments, packed or plain), its index and the fixed per-segment and per-run heap charges. The figure
 * is printed (docs/OPERATIONS.md quotes it) and held to the target of 64 KiB while streaming and once ended.
 */
class StandardRunFootprintTest {
    private static final long TARGET_BYTES = 64 * 1024;

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
        assertTrue(worstInFlight <= TARGET_BYTES, "while streaming: " + worstInFlight);
        assertTrue(ended <= TARGET_BYTES, "once ended: " + ended);
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
        assertEquals(log.frameBytes(), log.capacityBytes());
        log.release();
    }
}
