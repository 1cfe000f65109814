package io.iqstream.micro;

import io.iqstream.bench.workload.RunScript;
import io.iqstream.server.ingest.EventCheck;
import io.iqstream.server.ingest.EventValidator;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@link EventValidator#check} on one workload event in a pooled direct buffer (as it arrives from a socket):
 * a text delta, a tool-call arguments fragment, the 8 KiB tool result. One validator per publishing connection,
 * reused for every event, as in the server.
 */
@State(Scope.Thread)
public class EventValidatorBench extends HotPathBench {
    @Param({"TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "TOOL_CALL_RESULT"})
    public RunScript.Kind kind;

    private EventValidator validator;
    private ByteBuf event;

    @Setup
    public void setUp() {
        validator = new EventValidator();
        event = WorkloadEvents.direct(WorkloadEvents.first(kind));
        EventCheck verdict = validator.check(event);
        if (verdict != EventCheck.OK) {
            throw new IllegalStateException(kind + " is not valid: " + verdict + " " + validator.lastError());
        }
    }

    @TearDown
    public void tearDown() {
        event.release();
    }

    @Benchmark
    public EventCheck check() {
        return validator.check(event);
    }
}
