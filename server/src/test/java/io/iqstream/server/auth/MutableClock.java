package io.iqstream.server.auth;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves by hand. Any thread. */
final class MutableClock extends Clock {

    private final AtomicLong millis;

    MutableClock(Instant start) {
        this.millis = new AtomicLong(start.toEpochMilli());
    }

    static MutableClock atNow() {
        return new MutableClock(Instant.now());
    }

    void advance(Duration d) {
        millis.addAndGet(d.toMillis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }
}
