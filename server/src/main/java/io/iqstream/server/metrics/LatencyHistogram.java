package io.iqstream.server.metrics;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Prometheus histogram of durations with fixed buckets from 100 µs to 10 s: recording is a short bucket search
 * and two uncontended adds, with no allocation. Any thread.
 */
final class LatencyHistogram {
    /** Upper bounds (seconds) of the buckets; {@code +Inf} is implied. */
    private static final double[] BUCKETS_S = {
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    private final String name;
    private final String help;
    private final AtomicLongArray buckets = new AtomicLongArray(BUCKETS_S.length + 1);
    private final LongAdder count = new LongAdder();
    private final LongAdder sumNanos = new LongAdder();

    LatencyHistogram(String name, String help) {
        this.name = name;
        this.help = help;
    }

    void record(long nanos) {
        double s = nanos / 1e9;
        int i = 0;
        while (i < BUCKETS_S.length && s > BUCKETS_S[i]) {
            i++;
        }
        buckets.incrementAndGet(i);
        count.increment();
        sumNanos.add(nanos);
    }

    /** Appends HELP, TYPE, the cumulative buckets, the sum (seconds) and the count. */
    void render(StringBuilder sb) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(" histogram\n");
        long cumulative = 0;
        for (int i = 0; i < BUCKETS_S.length; i++) {
            cumulative += buckets.get(i);
            sb.append(name).append("_bucket{le=\"").append(BUCKETS_S[i]).append("\"} ").append(cumulative)
                    .append('\n');
        }
        cumulative += buckets.get(BUCKETS_S.length);
        sb.append(name).append("_bucket{le=\"+Inf\"} ").append(cumulative).append('\n');
        sb.append(name).append("_sum ").append(sumNanos.sum() / 1e9).append('\n');
        sb.append(name).append("_count ").append(count.sum()).append('\n');
    }
}
