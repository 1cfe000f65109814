package io.iqstream.micro;

import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.ingest.EventSink;
import io.iqstream.server.ingest.EventSplitter;
import io.netty.buffer.ByteBuf;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * A publish body cut into events by the server's splitter for its Content-Type ({@link EventSplitter}), fed chunk
 * by chunk as HTTP content arrives: the whole workload run (429 events) as NDJSON, SSE ({@code data:} frames) or a
 * JSON array, in chunks of {@code chunkBytes}, so events span chunks as they do on the wire. One invocation is a
 * whole body with its splitter made, fed, finished and released (one per publish request in the server), and the
 * figures are per event ({@link OperationsPerInvocation}). The partial-event buffers are pooled and charged to a
 * memory budget, as in the server. The sink consumes each event; validation and the append are measured apart.
 */
@State(Scope.Thread)
@OperationsPerInvocation(WorkloadEvents.EVENTS)
public class SplitterBench extends HotPathBench {
    @Param({"NDJSON", "SSE", "JSON"})
    public BodyFormat format;

    @Param({"64", "1024"})
    public int chunkBytes;

    private int maxEventBytes;
    private MemoryBudget budget;
    private ByteBuf body;
    private ByteBuf[] chunks;
    private final ConsumingSink sink = new ConsumingSink();

    @Setup
    public void setUp(Blackhole bh) {
        maxEventBytes = (int) ConfigParser.parse(new String[0], Map.of()).maxEventBytes();
        budget = new MemoryBudget(1L << 30);
        body = WorkloadEvents.direct(format.body());
        int n = (body.readableBytes() + chunkBytes - 1) / chunkBytes;
        chunks = new ByteBuf[n];
        for (int i = 0; i < n; i++) {
            int at = i * chunkBytes;
            chunks[i] = body.slice(at, Math.min(chunkBytes, body.readableBytes() - at));
        }
        sink.events = 0;
        feedRun(bh);
        if (sink.events != WorkloadEvents.EVENTS) {
            throw new IllegalStateException(format + " body gave " + sink.events + " events, not "
                    + WorkloadEvents.EVENTS);
        }
    }

    @TearDown
    public void tearDown() {
        body.release();
    }

    @Benchmark
    public void feedRun(Blackhole bh) {
        sink.bh = bh;
        EventSplitter splitter = EventSplitter.forContentType(format.contentType(), maxEventBytes,
                WorkloadEvents.ALLOCATOR, budget);
        try {
            for (ByteBuf chunk : chunks) {
                if (!splitter.feed(chunk, sink)) {
                    throw new IllegalStateException("the splitter stopped the body");
                }
            }
            if (!splitter.finish(sink)) {
                throw new IllegalStateException("the splitter refused the body's end");
            }
        } finally {
            splitter.release();
        }
    }

    /** Consumes every event; anything but an event or a keep-alive is a broken benchmark. */
    static final class ConsumingSink implements EventSink {
        Blackhole bh;
        int events;

        @Override
        public boolean onEvent(ByteBuf json) {
            events++;
            bh.consume(json);
            return true;
        }

        @Override
        public void onOversizeEvent() {
            throw new IllegalStateException("oversize event");
        }

        @Override
        public void onOverBudget() {
            throw new IllegalStateException("over budget");
        }

        @Override
        public void onBadEvent(String message) {
            throw new IllegalStateException(message);
        }

        @Override
        public void onFramingError(String message) {
            throw new IllegalStateException(message);
        }

        @Override
        public void onKeepAlive() {
            bh.consume(this);
        }
    }
}
