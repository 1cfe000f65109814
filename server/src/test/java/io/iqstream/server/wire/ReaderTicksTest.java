package io.iqstream.server.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One sweep per loop ticks every reader whose time has come; readers join and leave in any order, during a sweep too. */
class ReaderTicksTest {
    /** A reader that counts its ticks and stops after {@code ticksWanted}, or leaves another reader on its first. */
    private static final class Reader implements ReaderTicks.Ticked {
        int slot = -1;
        int ticks;
        final int ticksWanted;
        ReaderTicks.Ticked leavesOther;
        ReaderTicks in;
        CountDownLatch done;

        Reader(int ticksWanted) {
            this.ticksWanted = ticksWanted;
        }

        @Override
        public long tick(long nowNanos) {
            ticks++;
            if (leavesOther != null) {
                in.remove(leavesOther);
                leavesOther = null;
            }
            if (ticks >= ticksWanted) {
                done.countDown();
                return 0;
            }
            return nowNanos + 1_000_000L;
        }

        @Override
        public int tickSlot() {
            return slot;
        }

        @Override
        public void tickSlot(int s) {
            slot = s;
        }
    }

    @Test
    void ticksEveryReaderUntilItLeavesAndRemovesAnyInO1() throws Exception {
        EventLoop loop = new DefaultEventLoop();
        try {
            int n = 3000;
            List<Reader> readers = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(n - 2);
            int[] sizes = new int[2];
            loop.submit(() -> {
                ReaderTicks ticks = ReaderTicks.of(loop);
                for (int i = 0; i < n; i++) {
                    Reader r = new Reader(3 + i % 4);
                    r.in = ticks;
                    r.done = done;
                    readers.add(r);
                    ticks.add(r, System.nanoTime() + 1_000_000L, 1);
                }
                // one leaves before its first tick; one leaves another during its own tick
                ticks.remove(readers.get(10));
                readers.get(20).leavesOther = readers.get(25);
                sizes[0] = ticks.size();
            }).get();
            assertEquals(n - 1, sizes[0]);
            assertEquals(true, done.await(60, TimeUnit.SECONDS), "every remaining reader ticked to its end");
            loop.submit(() -> sizes[1] = ReaderTicks.of(loop).size()).get();
            assertEquals(0, sizes[1], "every reader left");
            for (int i = 0; i < n; i++) {
                int expected = i == 10 || i == 25 ? 0 : 3 + i % 4;
                assertEquals(expected, readers.get(i).ticks, "reader " + i + "'s ticks");
                assertEquals(-1, readers.get(i).slot, "reader " + i + " has no slot");
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
