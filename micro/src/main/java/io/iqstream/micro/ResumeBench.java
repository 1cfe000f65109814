package io.iqstream.micro;

import io.iqstream.bench.workload.RunScript;
import io.iqstream.micro.RelayFixture.SubscriberChannel;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.SegmentCopies;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * A browser resuming a finished workload run (429 events, stored and sealed by the server's own registry) with
 * {@code Last-Event-ID: 214}, the middle of the run:
 * <ul>
 *   <li>{@link #readFrom}: the log positioned at event 215, its first frames read as one retained slice (what
 *       the stream writes first);</li>
 *   <li>{@link #subscribe}: the whole resume after the request is routed: a {@code SubscriberStream} started on
 *       a keep-alive connection, its response head, the replay of events 215–429 through the HTTP encoder and
 *       the end of the response.</li>
 * </ul>
 * With {@code log=packed} (the default) every segment of an ended run is packed: each resume here pays the unpack
 * of the segments it reads, because the shared copies are swept after each one (a reconnect that finds a copy
 * another reader made is cheaper).
 */
@State(Scope.Thread)
public class ResumeBench extends HotPathBench {
    static final long LAST_EVENT_ID = WorkloadEvents.EVENTS / 2;
    private static final String RUN_ID = "resume";

    @Param({"packed", "plain"})
    public String log;

    private RelayFixture relay;
    private Run run;
    private SegmentCopies copies;
    private SubscriberChannel channel;

    @Setup
    public void setUp(Blackhole bh) {
        relay = log.equals("plain") ? new RelayFixture("--compress-log", "false") : new RelayFixture();
        run = relay.registry().create(RUN_ID);
        for (int i = 0; i < WorkloadEvents.EVENTS; i++) {
            ByteBuf event = WorkloadEvents.direct(WorkloadEvents.event(i));
            relay.registry().append(run, event, RunScript.kind(i) == RunScript.Kind.RUN_FINISHED);
            event.release();
        }
        if (!run.isEnded() || run.lastEventId() != WorkloadEvents.EVENTS) {
            throw new IllegalStateException("the run did not end after " + WorkloadEvents.EVENTS + " events");
        }
        copies = relay.registry().copies();
        channel = RelayFixture.connect();
        if (subscribe(bh) < run.log().frameBytes() / 2) {
            throw new IllegalStateException("the resume replayed less than half the run");
        }
    }

    @TearDown
    public void tearDown() {
        relay.close();
        channel.close();
    }

    @Benchmark
    public int readFrom(Blackhole bh) {
        ByteBuf frames = run.log().readFrom(LAST_EVENT_ID + 1);
        bh.consume(run.log().lastIdInSegmentOf(LAST_EVENT_ID + 1));
        bh.consume(frames.getByte(frames.readerIndex()));
        int bytes = frames.readableBytes();
        frames.release();
        sweep();
        return bytes;
    }

    @Benchmark
    public long subscribe(Blackhole bh) {
        relay.subscribe(channel, RUN_ID, LAST_EVENT_ID);
        long bytes = RelayFixture.drain(channel, bh);
        sweep();
        return bytes;
    }

    /** Frees the shared unpacked copies no reader holds (the registry does it a few times a second). */
    private void sweep() {
        if (copies != null) {
            copies.sweep();
        }
    }
}
