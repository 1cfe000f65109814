package io.iqstream.micro;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Every microbenchmark builds and runs: each configuration once, briefly (one 100 ms warm-up and one 100 ms
 * measurement, in this JVM: no fork), with the GC profiler, under the surefire JVM's PARANOID leak detection. Not
 * a speed test: it asserts that every benchmark finished without error, gave a positive time and an allocation
 * figure, and that no buffer leaked ({@link RecordingLeakDetector}). About 10–20 s.
 */
class MicroBenchmarksSmokeTest {
    private static final Set<String> BENCHMARKS = Set.of("EventValidatorBench.check", "SplitterBench.feedRun",
            "RunLogAppendBench.append", "FanOutBench.publish", "ResumeBench.readFrom", "ResumeBench.subscribe",
            "TokenCheckBench.authorize");
    /**
     * Configurations: 3 validator events, 3 formats × 2 chunk sizes, 2 logs, N = 1/10/100, 2 × 3 resumes, 4 token
     * algorithms × cache off/on.
     */
    private static final int CONFIGURATIONS = 3 + 6 + 2 + 3 + 6 + 8;

    static {
        // the benchmark threads are Netty threads, as in a fork (HotPathBench's jvmArgs)
        System.setProperty("jmh.executor", "CUSTOM");
        System.setProperty("jmh.executor.class", EventLoopThreads.class.getName());
        // a smoke run measures nothing: it may run beside a real JMH run (which holds JMH's machine-wide lock)
        System.setProperty("jmh.ignoreLock", "true");
    }

    @Test
    void everyBenchmarkRunsAndReportsTimeAndAllocationWithoutLeaks() throws Exception {
        Options options = new OptionsBuilder()
                .include("io\\.iqstream\\.micro\\..*")
                .forks(0)
                .warmupIterations(1)
                .warmupTime(TimeValue.milliseconds(100))
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(100))
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(options).run();

        Set<String> ran = new TreeSet<>();
        for (RunResult r : results) {
            String label = r.getParams().getBenchmark().replaceFirst("^io\\.iqstream\\.micro\\.", "") + " "
                    + r.getParams().getParamsKeys().stream().map(k -> k + "=" + r.getParams().getParam(k)).toList();
            ran.add(r.getParams().getBenchmark().replaceFirst("^io\\.iqstream\\.micro\\.", ""));
            double score = r.getPrimaryResult().getScore();
            assertTrue(score > 0 && Double.isFinite(score), label + ": time per op " + score);
            Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
            assertNotNull(alloc, label + ": no allocation figure (B/op)");
            assertTrue(alloc.getScore() >= 0, label + ": B/op " + alloc.getScore());
        }
        assertTrue(ran.containsAll(BENCHMARKS), "benchmarks that ran: " + ran);
        assertEquals(CONFIGURATIONS, results.size(), "configurations that ran: " + ran);
        assertTrue(System.getProperty("io.netty.customResourceLeakDetector", "").endsWith("RecordingLeakDetector"),
                "leaks are recorded (micro's surefire setup)");
        assertEquals(List.of(), RecordingLeakDetector.leaksAfterCollection(), "Netty reported leaked buffers");
    }
}
