package io.iqstream.server.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class if Netty's leak detector (PARANOID in tests, see the surefire argLine) reported a buffer
 * that was never released. Registered for every test class by autodetection (META-INF/services); it installs a
 * leak listener before any buffer class is initialised.
 */
public final class LeakCheckExtension implements AfterAllCallback {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            @SuppressWarnings("deprecation")
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                    long maxActive) {
                ResourceLeakDetector<T> d = new ResourceLeakDetector<>(resource, samplingInterval, maxActive);
                d.setLeakListener((type, records) -> LEAKS.add(type + ": " + records));
                return d;
            }
        });
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
            // leaks are reported when new buffers are tracked after the GC
            for (int j = 0; j < 64; j++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                b.release();
            }
        }
        List<String> found = List.copyOf(LEAKS);
        LEAKS.clear();
        assertTrue(found.isEmpty(), "Netty reported leaked buffers in " + context.getDisplayName()
                + " (or a class just before it): " + found);
    }
}
