package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;

/**
 * Cuts a streamed publish body into events, one format each (NDJSON, SSE, JSON). Each complete event goes to the
 * sink the moment its last byte arrives, not at the end of the request. Confined to the publishing connection's
 * event loop; holds at most one incomplete event (bounded by the event cap).
 */
public interface EventSplitter {
    /** Feeds the next chunk of the body; false when the sink stopped the body or the framing is bad. */
    boolean feed(ByteBuf chunk, EventSink sink);

    /** The body has ended; emits a last unterminated event if the format allows it. */
    boolean finish(EventSink sink);

    /** Frees any bytes held. Idempotent. */
    void release();

    /** The splitter for a Content-Type, or null when the type is not one the server takes (415). */
    static EventSplitter forContentType(String contentType, int maxEventBytes) {
        String ct = contentType == null ? "" : contentType.toLowerCase(java.util.Locale.ROOT);
        int semi = ct.indexOf(';');
        String base = (semi >= 0 ? ct.substring(0, semi) : ct).trim();
        return switch (base) {
            case "application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/ndjson" ->
                    new NdjsonSplitter(maxEventBytes);
            case "text/event-stream" -> new SseBodySplitter(maxEventBytes);
            case "application/json" -> new JsonBodySplitter(maxEventBytes);
            default -> null;
        };
    }
}
