package io.iqstream.server.wire;

import io.netty.channel.ChannelHandlerContext;

/**
 * What a connection's request path gives back while a live reader waits on it: an SSE response whose head is
 * written (AG-UI or Durable Streams) or a long-poll waiting at its stream's tail needs none of the HTTP decoder,
 * its parser state and buffers, or the handlers that watch for the next request until it ends. The connection's
 * router implements it ({@code http.HttpRequestHandler}); the readers, below it, find it as their context's handler.
 *
 * <p>While a reader waits its connection's pipeline is the step-down, an end-of-body encoder shared by every
 * connection, the timers and the router: a chunk is written below it ({@link #belowCodec}), the response's end
 * ({@code LastHttpContent.EMPTY_LAST_CONTENT}) goes through it as the last chunk, and anything the client sends
 * meanwhile (a request pipelined behind a live read) closes the connection, as it did with the decoder in place.
 * {@link #readerDone} puts a fresh decoder and encoder back, so a kept-alive connection serves its next request as
 * any other. Confined to the connection's current event loop.
 */
public interface WaitingReader {
    /**
     * The reader's response head is written (SSE) or nothing is to be written until its answer (long-poll): the
     * request path is dropped, later in this loop turn (never inside the decoder's own call), unless
     * {@link #readerDone} comes first.
     */
    void readerWaiting();

    /**
     * The reader is done waiting: before an answer that goes through the HTTP encoder (a long-poll's), or after an
     * SSE response's end was written; the request path is back for the connection's next request.
     */
    void readerDone();

    /** The context a body chunk is written from so that it reaches the socket without passing the HTTP codec. */
    ChannelHandlerContext belowCodec();

    /** The connection's {@link WaitingReader}, or null when it has none (a test's bare channel). */
    static WaitingReader of(ChannelHandlerContext ctx) {
        return ctx.handler() instanceof WaitingReader w ? w : null;
    }
}
