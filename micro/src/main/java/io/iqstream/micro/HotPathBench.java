package io.iqstream.micro;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The settings every microbenchmark shares (JMH reads these annotations from the superclass): average time per
 * operation in nanoseconds, one fork of 3 × 1 s warm-up and 5 × 1 s measurement, and a fork JVM set up like the
 * server's ({@code ./iqstream serve}: pooled buffers, no leak tracking, the same opens for Netty's direct memory)
 * with a fixed 1 GiB heap, whose benchmark threads are Netty threads as the server's loops are
 * ({@link EventLoopThreads}). Options on the command line ({@code -f}, {@code -wi}, {@code -i}) override these;
 * {@code -jvmArgsAppend} replaces the server-like flags (not the threads), {@code -jvmArgsPrepend} adds to them.
 *
 * <p>Run them all: {@code ./iqstream bench --micro}; one: {@code ./iqstream bench --micro FanOut}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgs = {"-Djmh.executor=CUSTOM", "-Djmh.executor.class=io.iqstream.micro.EventLoopThreads"},
        jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-Dio.netty.allocator.type=pooled",
            "-Dio.netty.leakDetection.level=disabled", "--enable-native-access=ALL-UNNAMED",
            "-Dio.netty.tryReflectionSetAccessible=true", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED"})
public abstract class HotPathBench {
    /** Refuses to measure on a plain thread (see {@link EventLoopThreads}): its B/op would not be the server's. */
    @Setup(Level.Trial)
    public void requireNettyThread() {
        if (!FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            throw new IllegalStateException("benchmark thread " + Thread.currentThread().getName()
                    + " is not a Netty thread: run with -Djmh.executor=CUSTOM -Djmh.executor.class="
                    + EventLoopThreads.class.getName());
        }
    }
}
