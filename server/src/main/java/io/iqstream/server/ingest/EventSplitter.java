package io.iqstream.server.ingest;

import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Cuts a streamed publish body into events, one format each (NDJSON, SSE, JSON). Each complete event goes to the
 * sink the moment its last byte arrives, not at the end of the request. Confined to the publishing connection's
 * event loop. An event inside one chunk is handed out as a slice of it; only an event that spans chunks is held,
 * in a {@link PartialEventBuffer} (pooled, capped at the event size, charged to the memory budget). A UTF-8 byte
 * order mark at the very start of the body is skipped.
 */
public interface EventSplitter {
    /** Feeds the next chunk of the body; false when the sink stopped the body or the framing is bad. */
    boolean feed(ByteBuf chunk, EventSink sink);

    /** The body has ended; emits a last unterminated event if the format allows it. */
    boolean finish(EventSink sink);

    /** Bytes held now for an incomplete event (never more than the event cap plus a line ending). */
    int heldBytes();

    /** Frees any bytes held and gives their budget back. Idempotent. */
    void release();

    /** Whether the body is SSE, the one format whose data lines may carry a protocol's end marker ({@code [DONE]}). */
    default boolean isSse() {
        return false;
    }

    /** {@link #forContentType(String, int, ByteBufAllocator, MemoryBudget)} with the default allocator, uncharged. */
    static EventSplitter forContentType(String contentType, int maxEventBytes) {
        return forContentType(contentType, maxEventBytes, ByteBufAllocator.DEFAULT, null);
    }

    /**
     * The splitter for a Content-Type, or null when the type is not one the server takes (415). Partial events are
     * held in buffers from {@code allocator}, charged to {@code budget} (null: uncharged).
     */
    static EventSplitter forContentType(String contentType, int maxEventBytes, ByteBufAllocator allocator,
            MemoryBudget budget) {
        String ct = contentType == null ? "" : contentType.toLowerCase(java.util.Locale.ROOT);
        int semi = ct.indexOf(';');
        String base = (semi >= 0 ? ct.substring(0, semi) : ct).trim();
        EventSplitter format = switch (base) {
            case "application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/ndjson" ->
                    new NdjsonSplitter(new PartialEventBuffer(allocator, budget, maxEventBytes + 1));
            case "text/event-stream" -> new SseBodySplitter(new PartialEventBuffer(allocator, budget,
                    maxEventBytes + 1));
            case "application/json" -> new JsonBodySplitter(new PartialEventBuffer(allocator, budget, maxEventBytes));
            default -> null;
        };
        return format == null ? null : new BomSkipper(format);
    }
}
