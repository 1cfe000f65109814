package io.iqstream.micro;

import io.iqstream.bench.workload.RunScript;
import io.iqstream.micro.RelayFixture.SubscriberChannel;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.SegmentCopies;
import io.iqstream.server.sse.SubscriberStream;
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
 *
 * <p>{@code log=live} is the load bench's reconnect: the same run still open (all but its terminal event), packed,
 * resumed in the middle of its newest packed segment (about fifty events back), within a second of that
 * segment's packing: the periodic sweep runs after each resume with the clock of the setup
 * ({@code SegmentCopies.sweep(now)}: idle copies a read made are freed, the lingering one is not); the stream is
 * closed after its replay, and each resume takes a new connection.
 */
@State(Scope.Thread)
public class ResumeBench extends HotPathBench {
    static final long LAST_EVENT_ID = WorkloadEvents.EVENTS / 2;
    private static final String RUN_ID = "resume";

    @Param({"packed", "plain", "live"})
    public String log;

    private RelayFixture relay;
    private Run run;
    private SegmentCopies copies;
    private SubscriberChannel channel;
    private long resumeAfter = LAST_EVENT_ID;
    /** Live: the clock the periodic sweep is given, fixed at setup (every resume within the segment's linger). */
    private long sweepNanos;

    @Setup
    public void setUp(Blackhole bh) {
        relay = log.equals("plain") ? new RelayFixture("--compress-log", "false") : new RelayFixture();
        run = relay.registry().create(RUN_ID);
        boolean live = log.equals("live");
        for (int i = 0; i < WorkloadEvents.EVENTS - (live ? 1 : 0); i++) {
            ByteBuf event = WorkloadEvents.direct(WorkloadEvents.event(i));
            relay.registry().append(run, event, RunScript.kind(i) == RunScript.Kind.RUN_FINISHED);
            event.release();
        }
        copies = relay.registry().copies();
        if (live) {
            long newestPacked = 1;
            long tail = 1;
            while (run.log().lastIdInSegmentOf(tail) < run.lastEventId()) {
                newestPacked = tail;
                tail = run.log().lastIdInSegmentOf(tail) + 1;
            }
            resumeAfter = (newestPacked + tail) / 2;
            sweepNanos = System.nanoTime();
            if (run.isEnded() || resumeAfter <= 1 || subscribe(bh) <= 0) {
                throw new IllegalStateException("the live run has no packed segment to resume into");
            }
            return;
        }
        if (!run.isEnded() || run.lastEventId() != WorkloadEvents.EVENTS) {
            throw new IllegalStateException("the run did not end after " + WorkloadEvents.EVENTS + " events");
        }
        channel = RelayFixture.connect();
        if (subscribe(bh) < run.log().frameBytes() / 2) {
            throw new IllegalStateException("the resume replayed less than half the run");
        }
    }

    @TearDown
    public void tearDown() {
        relay.close();
        if (channel != null) {
            channel.close();
        }
    }

    @Benchmark
    public int readFrom(Blackhole bh) {
        ByteBuf frames = run.log().readFrom(resumeAfter + 1);
        bh.consume(run.log().lastIdInSegmentOf(resumeAfter + 1));
        bh.consume(frames.getByte(frames.readerIndex()));
        int bytes = frames.readableBytes();
        frames.release();
        sweep();
        return bytes;
    }

    @Benchmark
    public long subscribe(Blackhole bh) {
        if (channel == null) { // live: the response stays open; a new connection per resume, closed after it
            SubscriberChannel connection = RelayFixture.connect();
            SubscriberStream stream = relay.subscribe(connection, RUN_ID, resumeAfter);
            long bytes = RelayFixture.drain(connection, bh);
            stream.closed();
            connection.close();
            sweep();
            return bytes;
        }
        relay.subscribe(channel, RUN_ID, resumeAfter);
        long bytes = RelayFixture.drain(channel, bh);
        sweep();
        return bytes;
    }

    /**
     * Frees the shared unpacked copies no reader holds: all of them for an ended run, as the registry's periodic
     * sweep does for a live one (the newest packed segment's copy lingers a while).
     */
    private void sweep() {
        if (copies == null) {
            return;
        }
        if (log.equals("live")) {
            copies.sweep(sweepNanos);
        } else {
            copies.sweep();
        }
    }
}
