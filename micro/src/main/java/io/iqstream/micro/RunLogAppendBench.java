package io.iqstream.micro;

import io.iqstream.bench.workload.RunScript;
import io.iqstream.server.run.RunLog;
import io.iqstream.server.run.SegmentCodec;
import io.iqstream.server.run.SegmentCopies;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@link RunLog#append} of a text delta: the frame encoded once into the tail segment and indexed. With
 * {@code log=packed} (the server's default, {@code --compress-log true}) every full 8 KiB segment is packed with
 * zlib when the next one starts, so that cost is in the figure, spread over the segment's events; {@code plain}
 * keeps segments as they are. A log is started anew every 429 events (a workload run): the release of the old log
 * and the new one's first segment and index page are in the figures too, as they are per run in the server.
 */
@State(Scope.Thread)
public class RunLogAppendBench extends HotPathBench {
    @Param({"packed", "plain"})
    public String log;

    private SegmentCodec codec;
    private SegmentCopies copies;
    private RunLog runLog;
    private ByteBuf delta;

    @Setup
    public void setUp() {
        codec = log.equals("packed") ? new SegmentCodec(WorkloadEvents.ALLOCATOR) : null;
        copies = codec == null ? null : new SegmentCopies(null);
        runLog = new RunLog(WorkloadEvents.ALLOCATOR, codec, copies);
        delta = WorkloadEvents.direct(WorkloadEvents.first(RunScript.Kind.TEXT_MESSAGE_CONTENT));
    }

    @TearDown
    public void tearDown() {
        runLog.release();
        delta.release();
        if (codec != null) {
            codec.close();
        }
    }

    @Benchmark
    public long append() {
        if (runLog.size() == WorkloadEvents.EVENTS) {
            runLog.release();
            runLog = new RunLog(WorkloadEvents.ALLOCATOR, codec, copies);
        }
        return runLog.append(delta);
    }
}
