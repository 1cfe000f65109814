package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Start stamps: the wall clock's microseconds, strictly increasing whatever the wall clock does. */
class StartClockTest {
    @Test
    void followsTheWallClockAndNeverRepeatsOrGoesBack() {
        AtomicLong wall = new AtomicLong(5_000_000);
        StartClock clock = new StartClock(wall::get);
        assertEquals(5_000_000, clock.nextMicros(), "the wall clock's reading when it moved on");
        assertEquals(5_000_001, clock.nextMicros(), "the same microsecond: one more");
        assertEquals(5_000_002, clock.nextMicros());
        wall.set(4_000_000);
        assertEquals(5_000_003, clock.nextMicros(), "a step back of the wall clock: still one more");
        wall.set(9_000_000);
        assertEquals(9_000_000, clock.nextMicros(), "the wall clock ahead again: its reading");
    }

    @Test
    void theNodesClockIsNearTheWallClockInMicroseconds() {
        long before = System.currentTimeMillis();
        long stamp = StartClock.NODE.nextMicros();
        long after = System.currentTimeMillis();
        assertTrue(stamp / 1000 >= before - 1 && stamp / 1000 <= after + 1000, before + " " + stamp + " " + after);
    }

    @Test
    void workersTakingStampsAtOnceGetDistinctIncreasingOnes() throws Exception {
        StartClock clock = new StartClock(() -> 42);
        int threads = 4;
        int each = 20_000;
        List<long[]> taken = new ArrayList<>();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long[] mine = new long[each];
            taken.add(mine);
            Thread th = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    mine[i] = clock.nextMicros();
                }
            });
            running.add(th);
            th.start();
        }
        for (Thread th : running) {
            th.join();
        }
        Set<Long> all = new HashSet<>();
        for (long[] mine : taken) {
            for (int i = 0; i < each; i++) {
                assertTrue(all.add(mine[i]), "stamp given twice: " + mine[i]);
                assertTrue(i == 0 || mine[i] > mine[i - 1], "each worker's stamps increase");
            }
        }
        assertEquals(threads * each, all.size());
    }
}
