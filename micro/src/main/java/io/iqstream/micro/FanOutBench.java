package io.iqstream.micro;

import io.iqstream.bench.workload.RunScript;
import io.iqstream.micro.RelayFixture.SubscriberChannel;
import io.iqstream.server.run.AppendOutcome;
import io.iqstream.server.run.Run;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * One text delta from its append to the SSE frames written to N subscribers: {@code RunRegistry.append} (caps,
 * budget, the log) tells each subscriber's {@code SubscriberStream}, which writes a shared slice of the log through
 * the HTTP response encoder; then the run flushes its readers once, as the publisher's read-complete does, and the
 * bytes each connection got are taken off it and released (as the socket write would). Subscribers are
 * {@link io.netty.channel.embedded.EmbeddedChannel}s ({@link RelayFixture}). The figure is per appended event, for
 * all N subscribers together.
 *
 * <p>A run is ended and a new one started (same subscribers, new streams) every {@value #EVENTS_PER_RUN} events, so
 * the log does not grow without end; that costs about 1/{@value #EVENTS_PER_RUN} of N stream starts per event.
 */
@State(Scope.Thread)
public class FanOutBench extends HotPathBench {
    static final int EVENTS_PER_RUN = 4096;
    private static final String RUN_ID = "fan-out";

    @Param({"1", "10", "100"})
    public int subscribers;

    private RelayFixture relay;
    private SubscriberChannel[] channels;
    private Run run;
    private ByteBuf delta;
    private ByteBuf finished;

    @Setup
    public void setUp(Blackhole bh) {
        relay = new RelayFixture();
        channels = new SubscriberChannel[subscribers];
        for (int i = 0; i < subscribers; i++) {
            channels[i] = RelayFixture.connect();
        }
        delta = WorkloadEvents.direct(WorkloadEvents.first(RunScript.Kind.TEXT_MESSAGE_CONTENT));
        finished = WorkloadEvents.direct(WorkloadEvents.first(RunScript.Kind.RUN_FINISHED));
        startRun(bh);
        long written = publish(bh);
        long frame = run.log().frameBytes();
        if (written < subscribers * frame) {
            throw new IllegalStateException(subscribers + " subscribers got " + written + " bytes of a " + frame
                    + " byte frame");
        }
    }

    @TearDown
    public void tearDown(Blackhole bh) {
        endRun(bh);
        relay.close();
        for (SubscriberChannel c : channels) {
            c.close();
        }
        delta.release();
        finished.release();
    }

    @Benchmark
    public long publish(Blackhole bh) {
        if (run.lastEventId() == EVENTS_PER_RUN) {
            endRun(bh);
            startRun(bh);
        }
        AppendOutcome outcome = relay.registry().append(run, delta, false);
        if (outcome != AppendOutcome.APPENDED) {
            throw new IllegalStateException("append: " + outcome);
        }
        run.flushReaders();
        long bytes = 0;
        for (SubscriberChannel c : channels) {
            bytes += RelayFixture.drain(c, bh);
        }
        return bytes;
    }

    private void startRun(Blackhole bh) {
        run = relay.registry().create(RUN_ID);
        for (SubscriberChannel c : channels) {
            relay.subscribe(c, RUN_ID, 0);
            RelayFixture.drain(c, bh);
        }
        if (run.readerCount() != subscribers) {
            throw new IllegalStateException(run.readerCount() + " readers attached, not " + subscribers);
        }
    }

    private void endRun(Blackhole bh) {
        relay.registry().append(run, finished, true);
        run.flushReaders();
        for (SubscriberChannel c : channels) {
            RelayFixture.drain(c, bh);
        }
        relay.registry().drop(run);
    }
}
