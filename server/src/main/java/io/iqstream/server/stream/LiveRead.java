package io.iqstream.server.stream;

import static io.iqstream.server.stream.DurableStreamProtocol.CLOSED;
import static io.iqstream.server.stream.DurableStreamProtocol.CURSOR;
import static io.iqstream.server.stream.DurableStreamProtocol.NEXT_OFFSET;
import static io.iqstream.server.stream.DurableStreamProtocol.UP_TO_DATE;

import io.iqstream.server.run.MessageBatch;
import io.iqstream.server.sse.ChunkFramer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A read of a durable stream ({@code GET}), on the stream's owner worker: catch-up (paged, ETag / 304), long-poll
 * (waits at the tail up to {@code --durable-streams-long-poll}) and SSE (a data event per message, each followed
 * by its control event). A live read holds a {@code --max-subscribers} slot and stays registered at the stream's
 * tail until it is answered, times out, or its connection closes ({@link #closed}).
 *
 * <p>One per request; confined to the owner worker's loop.
 */
public final class LiveRead implements DurableStream.TailWaiter, StreamAnswer {
    /** A catch-up answer holds at most this many bytes of messages (at least one message); the rest is paged. */
    static final long MAX_READ_BYTES = 256 * 1024;
    /** An SSE response ends after this long (the client reconnects from its offset), as the protocol allows. */
    static final long SSE_MAX_MS = 60_000;
    static final String CACHE_PUBLIC = "public, max-age=60, stale-while-revalidate=300";
    static final String CACHE_PRIVATE = "private, max-age=60, stale-while-revalidate=300";

    private final StreamReply reply;
    private final StreamExchange.Settings settings;
    private final DurableStreams streams;
    private final ChannelHandlerContext ctx;
    private final String path;
    private final boolean keepAlive;

    private DurableStream waitingOn;
    private ScheduledFuture<?> timer;
    private boolean sse;
    private boolean sseBase64;
    private long ssePosition;
    private String cursor;
    private long longPollPosition;
    private boolean done;
    /** A live read holds a subscriber slot (--max-subscribers) until it ends. */
    private boolean readerSlot;
    /** Messages of one answer or one delivery: one per worker, reused by every read on it (none is held across calls). */
    private static final FastThreadLocal<MessageBatch> BATCH = new FastThreadLocal<>() {
        @Override
        protected MessageBatch initialValue() {
            return new MessageBatch();
        }
    };

    private LiveRead(StreamReply reply) {
        this.reply = reply;
        this.settings = reply.settings;
        this.streams = reply.streams;
        this.ctx = reply.ctx;
        this.path = reply.path;
        this.keepAlive = reply.keepAlive;
    }

    /** Serves a GET; returns the read when it goes on live, else null (answered). */
    static LiveRead start(StreamReply reply, List<String> offsets, String live, String clientCursor) {
        LiveRead r = new LiveRead(reply);
        r.read(offsets, live, clientCursor);
        return r.done ? null : r;
    }

    // ---- reads ----------------------------------------------------------------------------------------------

    private void read(List<String> offsets, String live, String clientCursor) {
        long now = System.currentTimeMillis();
        DurableStream s = reply.existing(now);
        if (s == null) {
            done = true;
            return;
        }
        String offset = null;
        if (offsets != null && !offsets.isEmpty()) {
            if (offsets.size() > 1) {
                refuse(HttpResponseStatus.BAD_REQUEST, "one offset parameter, not several");
                return;
            }
            offset = offsets.get(0);
            if (offset.isEmpty()) {
                refuse(HttpResponseStatus.BAD_REQUEST, "offset must not be empty");
                return;
            }
            if (!offset.equals("now") && DurableStreamProtocol.position(offset) == Long.MIN_VALUE) {
                refuse(HttpResponseStatus.BAD_REQUEST, "offset must be -1, now or an offset the server gave");
                return;
            }
        }
        boolean longPoll = "long-poll".equals(live);
        sse = "sse".equals(live);
        if ((longPoll || sse) && offset == null) {
            refuse(HttpResponseStatus.BAD_REQUEST, "live=" + live + " needs an offset");
            return;
        }
        s.lastAccessMs = now;
        cursor = clientCursor;
        boolean atNow = "now".equals(offset);
        long position = offset == null ? -1 : atNow ? s.tail() : DurableStreamProtocol.position(offset);
        if (sse || longPoll && position >= s.tail() && !s.isClosed()) {
            if (!streams.admitReader()) {
                FullHttpResponse r = response(HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "live readers are at their cap (--max-subscribers); retry later");
                r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
                send(r);
                return;
            }
            readerSlot = true;
        }
        if (sse) {
            startSse(s, position);
            return;
        }
        if (atNow && !longPoll) {
            FullHttpResponse r = s.json ? response(HttpResponseStatus.OK, s.contentType, "[]")
                    : empty(HttpResponseStatus.OK);
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, s.contentType);
            r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.tail()));
            r.headers().set(UP_TO_DATE, "true");
            r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
            if (s.isClosed()) {
                r.headers().set(CLOSED, "true");
            }
            send(r);
            return;
        }
        if (longPoll && position >= s.tail()) {
            if (s.isClosed()) {
                send(longPollEmpty(s, false));
                return;
            }
            waitAtTail(s, position);
            return;
        }
        answerCatchUp(s, position, offset == null ? "-1" : offset, longPoll);
    }

    /** A catch-up (or long-poll) answer with the messages after {@code position}, paged. */
    private void answerCatchUp(DurableStream s, long position, String from, boolean longPoll) {
        MessageBatch parts = BATCH.get();
        parts.clear();
        s.log.collect(position, parts, MAX_READ_BYTES);
        long next = parts.isEmpty() ? Math.max(position, s.tail()) : parts.lastEnd();
        boolean upToDate = next >= s.tail();
        boolean closedHere = upToDate && s.isClosed();
        String nextOffset = DurableStreamProtocol.offset(next);
        String etag = DurableStreamProtocol.etag(path, from, nextOffset, closedHere);
        String ifNoneMatch = reply.request().headers().get(HttpHeaderNames.IF_NONE_MATCH);
        if (etag.equals(ifNoneMatch)) {
            FullHttpResponse r = empty(HttpResponseStatus.NOT_MODIFIED);
            r.headers().set(HttpHeaderNames.ETAG, etag);
            send(r);
            return;
        }
        CompositeByteBuf content = ctx.alloc().compositeDirectBuffer(Math.max(2, parts.size() * 2 + 1));
        if (s.json) {
            content.addComponent(true, Unpooled.wrappedBuffer(new byte[] {'['}));
        }
        for (int i = 0; i < parts.size(); i++) {
            if (s.json && i > 0) {
                content.addComponent(true, Unpooled.wrappedBuffer(new byte[] {','}));
            }
            content.addComponent(true, parts.data(i).retainedDuplicate());
        }
        parts.clear();
        if (s.json) {
            content.addComponent(true, Unpooled.wrappedBuffer(new byte[] {']'}));
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, s.contentType);
        r.headers().set(NEXT_OFFSET, nextOffset);
        if (upToDate) {
            r.headers().set(UP_TO_DATE, "true");
        }
        if (closedHere) {
            r.headers().set(CLOSED, "true");
        }
        if (longPoll) {
            r.headers().set(CURSOR, nextCursor());
        }
        // PROTOCOL.md 10.1: a chunk stays valid once served; private when reads need a token (a CDN must key on it)
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, settings.open() ? CACHE_PUBLIC : CACHE_PRIVATE);
        r.headers().set(HttpHeaderNames.ETAG, etag);
        settings.metrics().durableReads.increment();
        send(r);
    }

    private FullHttpResponse longPollEmpty(DurableStream s, boolean withCursor) {
        FullHttpResponse r = empty(HttpResponseStatus.NO_CONTENT);
        r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(Math.min(longPollPosition(s), s.tail())));
        r.headers().set(UP_TO_DATE, "true");
        r.headers().set(CURSOR, nextCursor());
        if (s.isClosed()) {
            r.headers().set(CLOSED, "true");
        }
        return r;
    }

    private long longPollPosition(DurableStream s) {
        return waitingOn == null && longPollPosition == 0 ? s.tail() : longPollPosition;
    }

    private String nextCursor() {
        return DurableStreamProtocol.cursor(cursor, System.currentTimeMillis(), ThreadLocalRandom.current().nextLong());
    }

    private void waitAtTail(DurableStream s, long position) {
        longPollPosition = position;
        waitingOn = s;
        s.waiters.add(this);
        timer = ctx.channel().eventLoop().schedule(this::longPollTimedOut, settings.longPollMs(),
                TimeUnit.MILLISECONDS);
    }

    private void stopWaiting() {
        if (waitingOn != null) {
            waitingOn.waiters.remove(this);
            waitingOn = null;
        }
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void longPollTimedOut() {
        DurableStream s = waitingOn;
        if (s == null || done) {
            return;
        }
        timer = null;
        stopWaiting();
        send(longPollEmpty(s, true));
    }

    @Override
    public void wake() {
        DurableStream s = waitingOn;
        if (s == null || done) {
            return;
        }
        if (sse) {
            ssePump(s);
            return;
        }
        if (s.softDeleted) {
            stopWaiting();
            refuse(HttpResponseStatus.GONE, "the stream was deleted");
            return;
        }
        if (s.tail() > longPollPosition) {
            stopWaiting();
            answerCatchUp(s, longPollPosition, DurableStreamProtocol.offset(longPollPosition), true);
        } else if (s.isClosed()) {
            stopWaiting();
            send(longPollEmpty(s, true));
        }
    }

    /** The connection closed (or failed): a live read stops waiting. */
    @Override
    public void closed() {
        if (sse && !done) {
            settings.metrics().durableSseReaders.decrement();
        }
        done = true;
        stopWaiting();
        releaseReaderSlot();
    }

    @Override
    public boolean isDone() {
        return done;
    }

    // ---- SSE ------------------------------------------------------------------------------------------------

    /** When the SSE response ends ({@link #SSE_MAX_MS} after it began). */
    private long sseEndMs;
    /** The HTTP codec's context, to write SSE chunks below it ({@link ChunkFramer}); null before SSE begins. */
    private ChannelHandlerContext codec;
    /** Something was written since the last tick (else the tick writes a control event: the keep-alive). */
    private boolean sseWrote;

    private void startSse(DurableStream s, long position) {
        sseBase64 = !DurableStreamProtocol.isSseText(s.contentType);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        HttpHeaders h = head.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
        h.set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        if (sseBase64) {
            h.set(DurableStreamProtocol.SSE_DATA_ENCODING, "base64");
        }
        reply.decorate(h);
        // an SSE read needs nothing more of its request: a parked reader does not hold its head and headers
        reply.forgetRequest();
        ctx.write(head);
        // its data go out as chunks framed below the encoder, which has the head by now (as an AG-UI subscriber's)
        codec = ctx.pipeline().context(HttpServerCodec.class);
        settings.metrics().durableSseReaders.increment();
        ssePosition = position;
        // registered at the tail for the response's life: each append wakes it, no timer per delivery; one timer
        // (the keep-alive tick, which also ends the response) at a time
        waitingOn = s;
        s.waiters.add(this);
        sseEndMs = System.currentTimeMillis() + SSE_MAX_MS;
        scheduleSseTick(settings.longPollMs());
        ssePump(s);
    }

    private void scheduleSseTick(long delayMs) {
        timer = ctx.channel().eventLoop().schedule(this::sseTick, Math.max(1, delayMs), TimeUnit.MILLISECONDS);
    }

    /** Writes every message after the reader's position, each with its control event; ends at a closed tail. */
    private void ssePump(DurableStream s) {
        if (done) {
            return;
        }
        if (s.softDeleted) {
            sseFinish();
            return;
        }
        String cursorNow = nextCursor();
        MessageBatch batch = BATCH.get();
        ByteBuf out = ctx.alloc().ioBuffer(512);
        boolean wrote = false;
        while (true) {
            batch.clear();
            s.log.collect(ssePosition, batch, MAX_READ_BYTES);
            if (batch.isEmpty()) {
                break;
            }
            long tail = s.tail();
            boolean closed = s.isClosed();
            for (int i = 0; i < batch.size(); i++) {
                DurableStreamProtocol.writeDataEvent(out, batch.data(i), s.json, sseBase64);
                ssePosition = batch.end(i);
                boolean atTail = ssePosition >= tail;
                DurableStreamProtocol.writeControlEvent(out, ssePosition, atTail && closed, cursorNow, atTail);
            }
            wrote = true;
            if (out.readableBytes() > MAX_READ_BYTES) {
                sseWrite(out);
                out = ctx.alloc().ioBuffer(512);
            }
        }
        batch.clear();
        if (ssePosition < s.tail()) {
            ssePosition = s.tail();
        }
        boolean closedAtTail = s.isClosed();
        if (!wrote || closedAtTail && !out.isReadable()) {
            DurableStreamProtocol.writeControlEvent(out, ssePosition, closedAtTail, cursorNow, true);
        }
        sseWrite(out);
        sseWrote = true;
        if (closedAtTail) {
            sseFinish();
            return;
        }
        ctx.flush();
    }

    /**
     * Every --durable-streams-long-poll: a control event when nothing else was written (the keep-alive); at
     * {@link #sseEndMs} the response ends.
     */
    private void sseTick() {
        timer = null;
        DurableStream s = waitingOn;
        if (done || s == null) {
            return;
        }
        long now = System.currentTimeMillis();
        if (now >= sseEndMs) {
            stopWaiting();
            sseFinish();
            return;
        }
        if (!sseWrote) {
            ByteBuf out = ctx.alloc().ioBuffer(128);
            DurableStreamProtocol.writeControlEvent(out, ssePosition, false, nextCursor(), true);
            sseWrite(out);
            ctx.flush();
        }
        sseWrote = false;
        scheduleSseTick(Math.min(settings.longPollMs(), sseEndMs - now));
    }

    private void sseWrite(ByteBuf out) {
        if (!out.isReadable()) {
            out.release();
            return;
        }
        settings.metrics().durableBytesOut.add(out.readableBytes());
        if (codec != null) {
            ChunkFramer.of().write(codec, out);
        } else {
            ctx.write(new DefaultHttpContent(out));
        }
    }

    private void sseFinish() {
        done = true;
        stopWaiting();
        releaseReaderSlot();
        settings.metrics().durableSseReaders.decrement();
        ChannelFuture f = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        if (!keepAlive) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }


    private void releaseReaderSlot() {
        if (readerSlot) {
            readerSlot = false;
            streams.releaseReader();
        }
    }

    private void send(FullHttpResponse r) {
        done = true;
        stopWaiting();
        releaseReaderSlot();
        reply.send(r);
    }

    private void refuse(HttpResponseStatus status, String message) {
        send(reply.response(status, message));
    }

    private FullHttpResponse response(HttpResponseStatus status, String contentType, String body) {
        return reply.response(status, contentType, body);
    }

    private FullHttpResponse response(HttpResponseStatus status, String message) {
        return reply.response(status, message);
    }

    private static FullHttpResponse empty(HttpResponseStatus status) {
        return StreamReply.empty(status);
    }
}
