package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;

/** Receives the events a {@link EventSplitter} cuts out of a publish body. Called on the run's worker loop. */
public interface EventSink {
    /**
     * One event's JSON bytes (readable bytes of {@code json}; valid only during the call, and its reader and
     * writer indexes must be left as they are: it may be the chunk itself, narrowed). Returns false to stop
     * the body here (the event was refused).
     */
    boolean onEvent(ByteBuf json);

    /** The event being read has passed the size cap before it was complete; the body stops here. */
    void onOversizeEvent();

    /** The memory budget cannot hold the event being read; the body stops here. */
    void onOverBudget();

    /** The next event is not an event object (a JSON array element that is an array, string, number...). */
    void onBadEvent(String message);

    /** The body is not framed as its Content-Type says (e.g. a JSON body that is not an object or array). */
    void onFramingError(String message);

    /** A unit that carries no event arrived whole (blank NDJSON line, SSE comment, whitespace between elements). */
    void onKeepAlive();
}
