package io.iqstream.micro;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads JMH runs the benchmarks on ({@code -Djmh.executor=CUSTOM -Djmh.executor.class=}this class, set in
 * {@link HotPathBench}): Netty {@code FastThreadLocalThread}s, like the server's event loops. Netty 4.2 keeps its
 * object pools ({@code Recycler}: buffer objects, slices, outbound-buffer entries) and the pooled allocator's
 * per-thread caches only on such threads; on JMH's plain threads every one of those objects would be allocated
 * anew, and the B/op figures would count allocation the server never makes (about 80% of the fan-out's).
 */
public final class EventLoopThreads extends ThreadPoolExecutor {
    /** The constructor JMH calls: at most {@code maxThreads} threads named after {@code prefix}. */
    public EventLoopThreads(int maxThreads, String prefix) {
        super(maxThreads, maxThreads, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(),
                new DefaultThreadFactory(prefix, true));
    }
}
