package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;

/**
 * Hands a sink part of a chunk as the chunk itself, its reader and writer indexes narrowed to that part for the
 * call and put back after: no slice object per event or line on the publish path ({@code RelayAllocationTest}).
 * Sinks take their bytes during the call only and leave the indexes alone ({@link EventSink#onEvent}). Stateless.
 */
final class ChunkWindow {
    private ChunkWindow() {
    }

    /** {@code sink.onEvent} with {@code chunk}'s bytes {@code [from, from + length)}. */
    static boolean onEvent(EventSink sink, ByteBuf chunk, int from, int length) {
        int readerIndex = chunk.readerIndex();
        int writerIndex = chunk.writerIndex();
        chunk.setIndex(from, from + length);
        try {
            return sink.onEvent(chunk);
        } finally {
            chunk.setIndex(readerIndex, writerIndex);
        }
    }

    /** {@code sink.onLine} with {@code chunk}'s bytes {@code [from, from + length)}. */
    static boolean onLine(LineReader.LineSink sink, ByteBuf chunk, int from, int length) {
        int readerIndex = chunk.readerIndex();
        int writerIndex = chunk.writerIndex();
        chunk.setIndex(from, from + length);
        try {
            return sink.onLine(chunk);
        } finally {
            chunk.setIndex(readerIndex, writerIndex);
        }
    }
}
