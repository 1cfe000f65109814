package io.iqstream.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.InvalidChunkTerminationException;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * The step-down: where a streaming publish body leaves Netty's HTTP objects. It sits first in a main-port
 * connection's pipeline, before the HTTP codec, and has two modes:
 * <ul>
 *   <li><b>head</b> (every connection, most of the time): bytes go on to the codec, cut after each {@code CRLF CRLF}
 *       so that the codec never holds a byte past the end of a request head. A request head ends at its first
 *       empty line, so when the codec decodes a head its input ends right there;</li>
 *   <li><b>body</b>: the handler decoding a chunked {@code POST /v1/runs/{id}/events} head calls
 *       {@link #stepDown} while the codec hands it the head. From the next byte the body's data chunks are read
 *       here, each {@code <hex size> CRLF <data> CRLF} straight from the socket's buffer, and the data handed to
 *       the {@link Sink} as slices of it: no {@code HttpContent}, no chunk object, no pass through the codec and
 *       the handlers after it. The codec meanwhile waits, untouched, in its own state at a chunk boundary.</li>
 * </ul>
 * Only the plain form is read here: a size line of one to seven hex digits, not starting with {@code 0}, then
 * CRLF (that is every data chunk of curl, Node's and Java's HTTP clients, and the bench). Anything else — the last
 * chunk {@code 0}, its trailers, a chunk extension, a size line that is malformed or too long — is handed back:
 * the bytes from that size line's first byte go to the codec, which is at exactly that boundary, and it decodes
 * the rest of the body as it always does (the {@code LastHttpContent} with its trailers, or its decoder failure),
 * so the end of a body and every malformed size line get Netty's own rules, limits and errors. The one error read
 * here is the codec's own: data not followed by CRLF is the same failed {@code LastHttpContent} carrying
 * {@link InvalidChunkTerminationException} that the codec would emit, passed on through the codec to the handlers.
 *
 * <p><b>Paused</b> ({@link #pause}, {@link #resume}): while the handler cannot yet decide how the request just
 * decoded is served — the connection is moving to the run's worker, peers are asked where a run lives, a thread
 * listing is being gathered — nothing more goes on: the rest of the read is kept here, undecoded, and goes on from
 * where it stopped once the handler resumes it. So a request pipelined behind one that is handed to another
 * worker is decoded only once the handler can step down for it (its body is never half decoded by the codec
 * first), and nothing behind a request is answered before it. What is kept is bounded by the reads already in
 * flight when the handler turned reading off (autoRead is off while paused): at most a few socket reads.
 *
 * <p><b>Reads on demand</b> ({@link #readOnDemand}): a stepped-down body served on this node asks for its next
 * socket read itself, from this handler's context at each read-complete, with autoRead off; with autoRead on,
 * Netty asks for it from the pipeline's tail after every read, a walk back through every handler of the
 * connection for each event a backend streams. Never while paused: the
 * handler that paused turns reading back on when it resumes. AutoRead is turned back on as the body ends (its
 * last chunk handed to the codec) or fails, so the next request on the connection is read as any other.
 *
 * <p>{@code ChunkedBodyReaderTest} and {@code ChunkedBodyReaderFuzzTest} check that any byte stream, cut into reads
 * anywhere, with pauses after any request, decodes to the same requests, the same body bytes and the same errors
 * with the step-down as with the codec alone. Confined to the connection's current event loop.
 */
public final class ChunkedBodyReader extends ChannelInboundHandlerAdapter {
    /** Where a stepped-down body's data goes. */
    public interface Sink {
        /** Data of the body, in order; the call takes the reference. */
        void bodyData(ByteBuf data);

        /** End of a socket read that carried body data (the codec saw none of it, so sends no read-complete). */
        void bodyReadComplete();
    }

    private enum Mode { HEAD, SIZE, DATA, DELIMITER, DISCARD }

    /** The most hex digits of a size line read here: 7 (under 256 MiB); longer lines go to the codec. */
    private static final int MAX_DIGITS = 7;
    private static final byte CR = '\r';
    private static final byte LF = '\n';

    private Mode mode = Mode.HEAD;
    private Sink sink;
    private ChannelHandlerContext self;
    /** HEAD: how many bytes of CR LF CR LF the bytes so far end with. */
    private int matched;
    /** SIZE: the size line read so far (its digits, then a CR), as bytes, first in the high end; and its length. */
    private long line;
    private int lineLength;
    private int chunkSize;
    /** DATA: bytes of the chunk still to come. DELIMITER: whether its first byte was read, and was a CR. */
    private int remaining;
    private boolean delimiterFirstRead;
    private boolean delimiterCr;
    /** A body read here delivered data in the read now in progress. */
    private boolean delivered;
    /** The handler asked for nothing more until {@link #resume}; {@link #kept}: the bytes not yet read. */
    private boolean paused;
    private ByteBuf kept;
    /** The stepped-down body asks for each read itself ({@link #readOnDemand}). */
    private boolean onDemand;
    /**
     * One byte of the search for CR LF CR LF across reads, {@link #matched} holding how much of it the bytes so far
     * end with: false when this byte completes it.
     */
    private boolean headEndStep(byte b) {
        int m = matched;
        if (b == CR) {
            m = m == 2 ? 3 : 1;
        } else if (b == LF && (m == 1 || m == 3)) {
            m++;
        } else {
            m = 0;
        }
        if (m == 4) {
            matched = 0;
            return false;
        }
        matched = m;
        return true;
    }

    /**
     * From the next byte after the head being decoded, read the chunked body here and give its data to
     * {@code to}. Called by the handler while the codec hands it that head: the codec's input ends with it
     * (see the class comment), so nothing of the body is in the codec. False (and nothing changes: the codec
     * reads the body) when the bytes so far did not end at a head's end.
     */
    public boolean stepDown(Sink to) {
        if (mode != Mode.HEAD || matched != 0) {
            return false;
        }
        sink = to;
        mode = Mode.SIZE;
        lineLength = 0;
        line = 0;
        chunkSize = 0;
        return true;
    }

    /**
     * Nothing more goes on from the next byte (see the class comment) until {@link #resume}. Called by the handler
     * while the codec hands it a request (or while it replays one), with autoRead off.
     */
    public void pause() {
        paused = true;
    }

    /**
     * Goes on with the bytes kept since {@link #pause}, on the connection's current loop; then a read-complete, as
     * after a socket read. A handler that pauses again meanwhile stops it there again.
     */
    public void resume() {
        ChannelHandlerContext ctx = self;
        if (!paused || ctx == null) {
            return;
        }
        paused = false;
        ByteBuf in = kept;
        kept = null;
        if (in == null) {
            return;
        }
        try {
            read(ctx, in);
        } finally {
            in.release();
        }
        channelReadComplete(ctx);
    }

    /**
     * The stepped-down body now being read asks for each socket read itself (see the class comment), until it
     * ends. For a body served on this node only, whose reading nothing but {@link #pause} ever stops: a relayed
     * one's reading follows its peer's writability. Does nothing unless stepped down.
     */
    public void readOnDemand() {
        if (isSteppedDown()) {
            onDemand = true;
        }
    }

    /** The body read on demand ended: autoRead on again, as for every other request. */
    private void endOnDemand(ChannelHandlerContext ctx) {
        if (onDemand) {
            onDemand = false;
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** Whether a body's data chunks are being read here: the codec then has nothing of this request to decode. */
    public boolean isSteppedDown() {
        return mode == Mode.SIZE || mode == Mode.DATA || mode == Mode.DELIMITER;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (paused) {
            keep(ctx, in);
            return;
        }
        try {
            read(ctx, in);
        } finally {
            in.release();
        }
    }

    /** Paused: the rest of {@code in} is kept, after what was kept before; takes the reference. */
    private void keep(ChannelHandlerContext ctx, ByteBuf in) {
        ctx.channel().config().setAutoRead(false); // whatever else turned it on meanwhile: kept bytes stay bounded
        kept = kept == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), kept, in);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (paused) {
            return; // the handler is not reading: the read-complete comes with resume()
        }
        if (delivered) {
            delivered = false;
            sink.bodyReadComplete();
        }
        if (mode == Mode.HEAD || mode == Mode.DISCARD) {
            ctx.fireChannelReadComplete();
        } else if (onDemand) {
            ChannelConfig config = ctx.channel().config();
            if (config.isAutoRead()) {
                config.setAutoRead(false); // once: the first read-complete, or after a move turned it back on
            }
            ctx.read();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        discard();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        self = ctx;
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        sink = null;
        self = null;
        discard();
    }

    /** Releases the bytes kept while paused (the connection closed where its pipeline gets no inactive event). */
    public void discard() {
        if (kept != null) {
            kept.release();
            kept = null;
        }
    }

    /** Consumes all of {@code in}, or keeps what is left of it when the handler pauses (the caller releases it). */
    private void read(ChannelHandlerContext ctx, ByteBuf in) {
        while (in.isReadable()) {
            if (paused) {
                keep(ctx, in.readRetainedSlice(in.readableBytes()));
                return;
            }
            switch (mode) {
                case HEAD -> forwardHead(ctx, in);
                case SIZE -> readSize(ctx, in);
                case DATA -> readData(in);
                case DELIMITER -> readDelimiter(ctx, in);
                default -> in.skipBytes(in.readableBytes()); // DISCARD: after a framing error, until closed
            }
        }
    }

    /**
     * HEAD: passes bytes on to the codec up to and including the next CR LF CR LF, or all of them ({@link
     * #headEnd(ByteBuf, int, int)}).
     */
    private void forwardHead(ChannelHandlerContext ctx, ByteBuf in) {
        int start = in.readerIndex();
        int stop = headEnd(in, start, in.writerIndex());
        int end = stop < 0 ? in.writerIndex() : stop + 1;
        in.readerIndex(end);
        // the codec may decode a head now and the handler step down in this call: the bytes after end are then
        // the body's, read by the loop in read()
        ctx.fireChannelRead(in.retainedSlice(start, end - start));
    }

    /**
     * The index of the LF that ends the first CR LF CR LF in {@code in[from, to)}, given the {@link #matched} bytes
     * before it, or -1 (then {@link #matched} holds what the range ends with). The same answer as
     * a {@code forEachByte} of {@link #headEndStep} at a few instructions per line rather than per byte: a partial match carried
     * over from the last read is finished byte by byte, then the buffer's own search (eight bytes at a time) finds
     * each LF and the three bytes before it are looked at. Every request head, a Durable Streams append's included,
     * and every {@code Content-Length} body passes through here.
     */
    private int headEnd(ByteBuf in, int from, int to) {
        int i = from;
        while (matched != 0 && i < to) {
            if (!headEndStep(in.getByte(i))) {
                return i;
            }
            i++;
        }
        // here nothing before i can be part of a match: one begins at i or later
        int clean = i;
        while (i < to) {
            int lf = in.indexOf(i, to, LF);
            if (lf < 0) {
                break;
            }
            if (lf - 3 >= clean && in.getByte(lf - 1) == CR && in.getByte(lf - 2) == LF
                    && in.getByte(lf - 3) == CR) {
                matched = 0;
                return lf;
            }
            i = lf + 1;
        }
        // what the range ends with: the longest match lies within its last three bytes
        for (int j = Math.max(clean, to - 3); j < to; j++) {
            headEndStep(in.getByte(j));
        }
        return -1;
    }

    /** SIZE: the size line, digit by digit; anything but the plain form is handed back. */
    private void readSize(ChannelHandlerContext ctx, ByteBuf in) {
        while (in.isReadable()) {
            byte b = in.getByte(in.readerIndex());
            boolean cr = lineLength > 0 && (line & 0xFF) == CR;
            if (cr) {
                if (b != LF) {
                    handBack(ctx, in);
                    return;
                }
                in.skipBytes(1);
                lineLength = 0;
                line = 0;
                remaining = chunkSize;
                mode = Mode.DATA;
                return;
            }
            int digit = hexValue(b);
            boolean plainDigit = digit >= 0 && lineLength < MAX_DIGITS && (lineLength > 0 || digit != 0);
            if (!plainDigit && !(b == CR && lineLength > 0)) {
                handBack(ctx, in);
                return;
            }
            if (digit >= 0) {
                chunkSize = chunkSize << 4 | digit;
            }
            line = line << 8 | (b & 0xFF);
            lineLength++;
            in.skipBytes(1);
        }
    }

    /** DATA: the chunk's bytes to the sink as slices of the read's buffer. */
    private void readData(ByteBuf in) {
        int n = Math.min(remaining, in.readableBytes());
        remaining -= n;
        delivered = true;
        sink.bodyData(in.readRetainedSlice(n));
        if (remaining == 0) {
            chunkSize = 0;
            delimiterFirstRead = false;
            mode = Mode.DELIMITER;
        }
    }

    /**
     * DELIMITER: the two bytes after a chunk's data must be CR LF; anything else is the codec's own error, judged
     * as the codec judges it, once both bytes are in (a connection that closes after one wrong byte is a closure
     * mid-body, not a framing error, there too).
     */
    private void readDelimiter(ChannelHandlerContext ctx, ByteBuf in) {
        byte b = in.readByte();
        if (!delimiterFirstRead) {
            delimiterFirstRead = true;
            delimiterCr = b == CR;
            return;
        }
        delimiterFirstRead = false;
        if (delimiterCr && b == LF) {
            mode = Mode.SIZE;
            return;
        }
        mode = Mode.DISCARD;
        endOnDemand(ctx);
        in.skipBytes(in.readableBytes());
        LastHttpContent failed = new DefaultLastHttpContent();
        failed.setDecoderResult(DecoderResult.failure(new InvalidChunkTerminationException()));
        ctx.fireChannelRead(failed);
    }

    /**
     * The size line now being read is not the plain form (the last chunk, an extension, an error): the codec,
     * which waits at this very boundary, gets it from its first byte, and the rest of the read after it; then head
     * mode again.
     */
    private void handBack(ChannelHandlerContext ctx, ByteBuf in) {
        mode = Mode.HEAD;
        endOnDemand(ctx); // before the codec sees the body's end: a request after it may turn reading off again
        matched = 0;
        if (lineLength > 0) {
            ByteBuf pending = ctx.alloc().buffer(lineLength);
            for (int shift = (lineLength - 1) * 8; shift >= 0; shift -= 8) {
                pending.writeByte((int) (line >>> shift));
            }
            lineLength = 0;
            line = 0;
            chunkSize = 0;
            // through the same cut as any other bytes: a size line's digits hold no CR LF CR LF, but its CR starts one
            forwardHead(ctx, pending);
            pending.release();
        }
        chunkSize = 0;
    }

    /**
     * The value of a hex digit, or -1 for any other byte (not Netty's {@code StringUtil.decodeHexNibble(byte)},
     * which indexes its table with the signed byte: a byte of 0x80 or more throws; the fuzz test found it).
     */
    private static int hexValue(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }
}
