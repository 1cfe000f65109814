package io.iqstream.server.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The demo's quota under a controlled clock: the burst, the rate, the run count and the byte share. */
class DemoQuotaTest {
    private final AtomicLong nanos = new AtomicLong(1_000);

    @Test
    void aBurstThenTheRate() {
        DemoQuota quota = new DemoQuota(100, 1 << 20, 60, 3, nanos::get);
        for (int i = 0; i < 3; i++) {
            assertNull(quota.tryAdmit(10), "burst run " + i);
        }
        assertEquals(DemoQuota.Refusal.RATE_LIMITED, quota.tryAdmit(10));
        assertEquals(1, quota.secondsUntilNextToken());
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(999));
        assertEquals(DemoQuota.Refusal.RATE_LIMITED, quota.tryAdmit(10), "60 a minute: one a second");
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(2));
        assertNull(quota.tryAdmit(10));
        nanos.addAndGet(TimeUnit.HOURS.toNanos(1));
        for (int i = 0; i < 3; i++) {
            assertNull(quota.tryAdmit(10), "a quiet hour refills the burst, no more: " + i);
        }
        assertEquals(DemoQuota.Refusal.RATE_LIMITED, quota.tryAdmit(10));
        assertEquals(7, quota.runsHeld());
    }

    @Test
    void runsAndBytesHeldAreCappedAndGivenBack() {
        DemoQuota quota = new DemoQuota(2, 100, 1_000_000, 1_000, nanos::get);
        assertNull(quota.tryAdmit(40));
        assertEquals(DemoQuota.Refusal.BYTES_FULL, quota.tryAdmit(61), "over the byte share");
        assertNull(quota.tryAdmit(60));
        assertEquals(DemoQuota.Refusal.RUNS_FULL, quota.tryAdmit(0));
        quota.release(40);
        assertEquals(1, quota.runsHeld());
        assertEquals(60, quota.bytesHeld());
        assertNull(quota.tryAdmit(40));
    }
}
