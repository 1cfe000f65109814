package io.iqstream.micro;

import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.SplittableRandom;

/**
 * The inputs of every microbenchmark: one run of the project's workload (docs/WORKLOAD.md) made by the load
 * benchmark's own {@link AgUiRun} with a fixed seed, so these figures and the load benchmark's see the same bytes:
 * 429 AG-UI events, text deltas of 2–8 characters, 40 {@code TOOL_CALL_ARGS} fragments, one 8 KiB
 * {@code TOOL_CALL_RESULT}. The run as a publish body: {@link BodyFormat}. Immutable; any thread.
 */
final class WorkloadEvents {
    /** Events in one run. */
    static final int EVENTS = RunScript.EVENTS;
    /** The allocator the server runs with ({@code -Dio.netty.allocator.type=pooled} in the launcher). */
    static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

    private static final AgUiRun RUN = new AgUiRun(new RunScript(1.0), new SplittableRandom(11), 1_767_225_600_000L);

    private WorkloadEvents() {}

    /** The JSON of event {@code index} (0-based) of the run. */
    static byte[] event(int index) {
        return RUN.event(index);
    }

    /** The JSON of the run's first event of {@code kind}. */
    static byte[] first(RunScript.Kind kind) {
        for (int i = 0; i < EVENTS; i++) {
            if (RunScript.kind(i) == kind) {
                return RUN.event(i);
            }
        }
        throw new IllegalArgumentException("no " + kind + " in the workload run");
    }

    /** {@code bytes} in a pooled direct buffer, as events arrive from a socket; the caller releases it. */
    static ByteBuf direct(byte[] bytes) {
        return ALLOCATOR.directBuffer(bytes.length, bytes.length).writeBytes(bytes);
    }
}
