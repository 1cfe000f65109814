package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The run's reader list: an append calls the awake readers only; a parked reader is not called per event until it
 * is woken, is still counted and still told when the run is dropped (issue 31, item 6: 1,000 readers whose sockets
 * are full must not cost every append a call each).
 */
class RunReadersTest {
    /** Counts what the run calls; a reader of the run under test, not a stand-in for it. */
    private static final class CountingReader implements RunReader {
        int available;
        int flushes;
        int dropped;

        @Override
        public void eventsAvailable() {
            available++;
        }

        @Override
        public void flush() {
            flushes++;
        }

        @Override
        public Channel channel() {
            return null;
        }

        @Override
        public void runDropped() {
            dropped++;
        }
    }

    private static void append(Run run) {
        ByteBuf json = Unpooled.copiedBuffer("{\"type\":\"CUSTOM\",\"name\":\"x\",\"value\":1}", StandardCharsets.UTF_8);
        run.store(json, run.log().frameLength(json.readableBytes()), false, System.nanoTime());
        json.release();
    }

    @Test
    void aParkedReaderIsNotCalledPerAppendUntilWoken() {
        Run run = new Run("r", ByteBufAllocator.DEFAULT, null, null, System.nanoTime());
        CountingReader awake = new CountingReader();
        CountingReader parked = new CountingReader();
        run.addReader(awake);
        run.addReader(parked);
        run.park(parked);
        run.park(parked); // no-op: already parked
        for (int i = 0; i < 100; i++) {
            append(run);
        }
        run.flushReaders();
        assertEquals(100, awake.available, "the awake reader hears of every append");
        assertEquals(0, parked.available, "the parked reader is not walked per append");
        assertEquals(0, parked.flushes, "nor flushed by the publisher's read-complete");
        assertEquals(2, run.readerCount(), "a parked reader still counts");
        assertTrue(run.readers().contains(parked), "and is listed");

        run.wake(parked);
        run.wake(parked); // no-op: already awake
        append(run);
        assertEquals(1, parked.available, "a woken reader hears of the next append");
        assertEquals(101, awake.available);

        run.park(parked);
        run.removeReader(parked);
        assertEquals(1, run.readerCount(), "a parked reader is removed like an awake one");
        run.addReader(parked);
        run.park(parked);
        run.markDropped();
        assertEquals(1, awake.dropped, "the awake reader is told the run is gone");
        assertEquals(1, parked.dropped, "and so is the parked one");
        assertEquals(0, run.readerCount());
        run.log().release();
    }
}
