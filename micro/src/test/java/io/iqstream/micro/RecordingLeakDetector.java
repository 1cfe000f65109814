package io.iqstream.micro;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty's leak detector, also recording each leak it reports so a test can fail on it. Netty makes it for every
 * tracked resource type when {@code -Dio.netty.customResourceLeakDetector} names it (micro's surefire setup does).
 * Any thread.
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    /** The constructor Netty looks for first. */
    @SuppressWarnings("deprecation")
    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        super(resourceType, samplingInterval, maxActive);
    }

    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
    }

    /**
     * The leaks reported once what is unreachable now has been collected: a leak is reported when its buffer has
     * been collected and a later allocation is tracked.
     */
    static List<String> leaksAfterCollection() throws InterruptedException {
        for (int round = 0; round < 3; round++) {
            System.gc();
            Thread.sleep(50);
            PooledByteBufAllocator.DEFAULT.directBuffer(16).release();
        }
        return List.copyOf(LEAKS);
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add(resourceType + ":" + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add(resourceType + " (untraced)");
        super.reportUntracedLeak(resourceType);
    }
}
