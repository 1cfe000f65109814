package io.iqstream.server.stream;

import static io.iqstream.server.stream.DurableStreamProtocol.CLOSED;
import static io.iqstream.server.stream.DurableStreamProtocol.CURSOR;
import static io.iqstream.server.stream.DurableStreamProtocol.NEXT_OFFSET;
import static io.iqstream.server.stream.DurableStreamProtocol.UP_TO_DATE;

import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.MessageBatch;
import io.iqstream.server.wire.ChunkFramer;
import io.iqstream.server.wire.ReaderTicks;
import io.iqstream.server.wire.WaitingReader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
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
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A read of a durable stream ({@code GET}), on the stream's owner worker: catch-up (paged, ETag / 304), long-poll
 * (waits at the tail up to {@code --durable-streams-long-poll}) and SSE (a data event per message, each followed
 * by its control event). A live read holds a {@code --max-subscribers} slot and stays registered at the stream's
 * tail until it is answered, times out, or its connection closes ({@link #closed}).
 *
 * <p>An SSE read is a cursor into the stream's log ({@link #ssePosition}), as an AG-UI subscriber is into its run's:
 * it writes only while its connection is writable, at most {@link #SSE_BATCH_BYTES} of messages (or one message)
 * past the write buffer's high-water mark, and stops when the connection is not writable; the connection's
 * writability change ({@link #writabilityChanged}) or the next append goes on from where it stopped. It holds no
 * queue and no copy of the stream. A reader whose connection stays unwritable for {@code --max-subscriber-lag}
 * ({@link #cutAfterLagMs}) is cut: its connection is closed, which frees what was queued for it.
 *
 * <p>One per request; confined to the owner worker's loop.
 */
public final class LiveRead implements DurableStream.TailWaiter, StreamAnswer, ReaderTicks.Ticked {
    /** A catch-up answer holds at most this many bytes of messages (at least one message); the rest is paged. */
    static final long MAX_READ_BYTES = 256 * 1024;
    /** One SSE write holds at most this many bytes of messages (at least one message); then writability decides. */
    static final long SSE_BATCH_BYTES = 64 * 1024;
    /** The lag after which an unwritable SSE reader is cut, until its route gives {@code --max-subscriber-lag}. */
    static final long DEFAULT_MAX_LAG_MS = 30_000;
    static final String CACHE_PUBLIC = "public, max-age=60, stale-while-revalidate=300";
    static final String CACHE_PRIVATE = "private, max-age=60, stale-while-revalidate=300";

    private final StreamReply reply;
    private final StreamExchange.Settings settings;
    private final DurableStreams streams;
    private final ChannelHandlerContext ctx;
    private final String path;
    private final boolean keepAlive;

    private DurableStream waitingOn;
    /** Its loop's reader timers, where a live read has a slot (SSE: its tick; long-poll: its timeout); or null. */
    private ReaderTicks ticks;
    private int tickSlot = -1;
    private boolean sse;
    private boolean sseBase64;
    private long ssePosition;
    private String cursor;
    private long longPollPosition;
    private boolean done;
    /** The answer when a cold stream's page is read from its file: the request is then its, not this read's. */
    private StreamAnswer fromFile;
    /** A live read holds a subscriber slot (--max-subscribers) until it ends. */
    private boolean readerSlot;
    /** The stream read live while {@link #readerSlot} is held (its {@link DurableStream#liveReads} counts this). */
    private DurableStream readerOf;
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
    static StreamAnswer start(StreamReply reply, List<String> offsets, String live, String clientCursor) {
        LiveRead r = new LiveRead(reply);
        r.read(offsets, live, clientCursor);
        return r.fromFile != null ? r.fromFile : r.done ? null : r;
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
            readerOf = s;
            s.liveReads++;
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

    /**
     * A catch-up (or long-poll) answer with the messages after {@code position}, paged. A cold stream's page is
     * read from its file instead ({@link ColdRead}), the stream left cold (a long-poll at its tail waits as on any
     * stream: the append that wakes it loads the stream first).
     */
    private void answerCatchUp(DurableStream s, long position, String from, boolean longPoll) {
        if (s.cold && position < s.tail()) {
            fromFile = ColdRead.start(reply, s, position, from, longPoll ? nextCursor() : null);
            done = true;
            return;
        }
        MessageBatch parts = BATCH.get();
        parts.clear();
        s.log.collect(position, parts, MAX_READ_BYTES);
        long next = parts.isEmpty() ? Math.max(position, s.tail()) : parts.lastEnd();
        boolean closedHere = next >= s.tail() && s.isClosed();
        String etag = DurableStreamProtocol.etag(path, from, DurableStreamProtocol.offset(next), closedHere);
        FullHttpResponse notModified = notModified(reply, etag);
        if (notModified != null) {
            parts.clear();
            send(notModified);
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
        send(page(reply, s, content, next, s.tail(), s.isClosed(), etag, longPoll ? nextCursor() : null));
    }

    /** The 304 answer when the request's {@code If-None-Match} names {@code etag}; else null. */
    static FullHttpResponse notModified(StreamReply reply, String etag) {
        if (!etag.equals(reply.request().headers().get(HttpHeaderNames.IF_NONE_MATCH))) {
            return null;
        }
        FullHttpResponse r = StreamReply.empty(HttpResponseStatus.NOT_MODIFIED);
        r.headers().set(HttpHeaderNames.ETAG, etag);
        return r;
    }

    /**
     * A catch-up page's answer: {@code content} (the messages, framed), ending at {@code next}, of a stream whose
     * tail is {@code tail} and which is {@code closed} or not, with the protocol's headers ({@code cursor}: a
     * long-poll's, or null).
     */
    static FullHttpResponse page(StreamReply reply, DurableStream s, ByteBuf content, long next, long tail,
            boolean closed, String etag, String cursor) {
        boolean upToDate = next >= tail;
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, s.contentType);
        r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(next));
        if (upToDate) {
            r.headers().set(UP_TO_DATE, "true");
        }
        if (upToDate && closed) {
            r.headers().set(CLOSED, "true");
        }
        if (cursor != null) {
            r.headers().set(CURSOR, cursor);
        }
        // PROTOCOL.md 10.1: a chunk stays valid once served; private when reads need a token (a CDN must key on it)
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, reply.settings.open() ? CACHE_PUBLIC : CACHE_PRIVATE);
        r.headers().set(HttpHeaderNames.ETAG, etag);
        reply.settings.metrics().durableReads.increment();
        return r;
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
        // its timeout is a slot in its loop's sweep (ReaderTicks), not a timer task of its own
        ticks = ReaderTicks.of(ctx.channel().eventLoop());
        ticks.add(this, System.nanoTime() + settings.longPollMs() * 1_000_000L, settings.longPollMs());
        reply.keepWhatAnAnswerNeeds(); // not its target and other headers while it waits
        WaitingReader waiting = WaitingReader.of(ctx);
        if (waiting != null) {
            waiting.readerWaiting(); // nothing goes out until the answer: the request path leaves until then
        }
    }

    private void stopWaiting() {
        if (waitingOn != null) {
            waitingOn.waiters.remove(this);
            waitingOn = null;
        }
        if (ticks != null) {
            ticks.remove(this);
            ticks = null;
        }
    }

    @Override
    public int tickSlot() {
        return tickSlot;
    }

    @Override
    public void tickSlot(int slot) {
        tickSlot = slot;
    }

    /** Its loop's sweep: an SSE read's tick; a long-poll's timeout. Returns the next due time, or 0 (no more). */
    @Override
    public long tick(long nowNanos) {
        if (sse) {
            return sseTick(nowNanos);
        }
        longPollTimedOut();
        return 0;
    }

    private void longPollTimedOut() {
        DurableStream s = waitingOn;
        if (s == null || done) {
            return;
        }
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

    /**
     * When the SSE response ends ({@code --sse-lifetime} after it began; the client reconnects from its offset, as
     * the protocol has it for a CDN's sake), or {@link Long#MAX_VALUE}: only at the stream's closure or the client's.
     */
    private long sseEndMs;
    /** The HTTP codec's context, to write SSE chunks below it ({@link ChunkFramer}); null before SSE begins. */
    private ChannelHandlerContext codec;
    /** When something was last written ({@link System#currentTimeMillis}); a keep-alive goes out after a quiet poll. */
    private long sseLastWriteMs;
    /** When the connection was found unwritable, 0 while it is writable: the lag cut counts from here. */
    private long sseUnwritableSinceMs;
    /** An unwritable SSE reader is cut after this long ({@code --max-subscriber-lag}). */
    private long maxLagMs = DEFAULT_MAX_LAG_MS;
    /** {@link #ssePump} is running: a writability change during its flush is picked up by its own loop. */
    private boolean pumping;

    /**
     * Sets how long an SSE reader's connection may stay unwritable before it is cut ({@code --max-subscriber-lag});
     * its route calls this as the read goes on live.
     */
    @Override
    public void cutAfterLagMs(long lagMs) {
        this.maxLagMs = lagMs;
        if (sse && !done && ticks != null) {
            ticks.remove(this);
            ticks.add(this, System.nanoTime() + tickMs() * 1_000_000L, tickMs());
        }
    }

    /** The connection's writability changed: an SSE read goes on writing when it drains, or stops. */
    @Override
    public void writabilityChanged() {
        DurableStream s = waitingOn;
        if (!sse || done || s == null) {
            return;
        }
        if (ctx.channel().isWritable()) {
            sseUnwritableSinceMs = 0;
            ssePump(s);
        } else if (sseUnwritableSinceMs == 0) {
            sseUnwritableSinceMs = System.currentTimeMillis();
        }
    }

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
        // and leaves the pipeline while the response is open (a fresh one comes back at its end)
        WaitingReader waiting = WaitingReader.of(ctx);
        if (waiting != null) {
            codec = waiting.belowCodec();
            waiting.readerWaiting();
        } else {
            codec = ctx.pipeline().context(HttpServerCodec.class);
        }
        settings.metrics().durableSseReaders.increment();
        ssePosition = position;
        // registered at the tail for the response's life: each append wakes it, no timer per delivery; one tick
        // (the keep-alive, the lag cut, the response's end)
        waitingOn = s;
        s.waiters.add(this);
        sseEndMs = settings.sseLifetimeMs() == 0 ? Long.MAX_VALUE
                : System.currentTimeMillis() + settings.sseLifetimeMs();
        sseLastWriteMs = System.currentTimeMillis();
        // its tick is a slot in its loop's sweep (ReaderTicks), not a timer task of its own
        ticks = ReaderTicks.of(ctx.channel().eventLoop());
        ticks.add(this, System.nanoTime() + tickMs() * 1_000_000L, tickMs());
        ssePump(s);
    }

    /** The tick's period: the keep-alive's, or a quarter of the lag limit when that is shorter (so the cut is on time). */
    private long tickMs() {
        return Math.min(settings.longPollMs(), Math.max(10, maxLagMs / 4));
    }


    /**
     * Writes the messages after the reader's position, each with its control event, while the connection is
     * writable; ends the response at a closed tail. Stops, holding nothing, when the connection is not writable.
     */
    private void ssePump(DurableStream s) {
        if (done || pumping) {
            return; // a pump running now (this is its flush's writability change) checks writability itself
        }
        if (s.softDeleted) {
            sseFinish();
            return;
        }
        pumping = true;
        try {
            pumpWhileWritable(s);
        } finally {
            pumping = false;
        }
    }

    private void pumpWhileWritable(DurableStream s) {
        Channel ch = ctx.channel();
        String cursorNow = null;
        MessageBatch batch = BATCH.get();
        boolean wrote = false;
        boolean lastSaidClosed = false;
        while (true) {
            if (!ch.isWritable()) {
                if (sseUnwritableSinceMs == 0) {
                    sseUnwritableSinceMs = System.currentTimeMillis();
                }
                if (wrote) {
                    ctx.flush();
                    if (ch.isWritable() && !done) {
                        continue; // the flush drained it: go on
                    }
                }
                return; // writabilityChanged goes on from ssePosition
            }
            batch.clear();
            s.log.collect(ssePosition, batch, SSE_BATCH_BYTES);
            if (batch.isEmpty()) {
                break;
            }
            if (cursorNow == null) {
                cursorNow = nextCursor();
            }
            long tail = s.tail();
            boolean closed = s.isClosed();
            ByteBuf out = ctx.alloc().ioBuffer(512);
            for (int i = 0; i < batch.size(); i++) {
                DurableStreamProtocol.writeDataEvent(out, batch.data(i), s.json, sseBase64);
                ssePosition = batch.end(i);
                boolean atTail = ssePosition >= tail;
                lastSaidClosed = atTail && closed;
                DurableStreamProtocol.writeControlEvent(out, ssePosition, lastSaidClosed, cursorNow, atTail);
            }
            batch.clear();
            sseWrite(out);
            wrote = true;
        }
        batch.clear();
        // caught up
        if (ssePosition < s.tail()) {
            ssePosition = s.tail();
        }
        boolean closedAtTail = s.isClosed();
        if (!wrote || closedAtTail && !lastSaidClosed) {
            ByteBuf out = ctx.alloc().ioBuffer(128);
            DurableStreamProtocol.writeControlEvent(out, ssePosition, closedAtTail,
                    cursorNow == null ? nextCursor() : cursorNow, true);
            sseWrite(out);
        }
        if (closedAtTail) {
            sseFinish();
            return;
        }
        ctx.flush();
    }

    /**
     * Every {@link #tickMs}: a reader unwritable for {@code --max-subscriber-lag} is cut; a control event goes out
     * when nothing was written for --durable-streams-long-poll (the keep-alive); at {@link #sseEndMs} the response
     * ends.
     */
    private long sseTick(long nowNanos) {
        DurableStream s = waitingOn;
        if (done || s == null) {
            return 0;
        }
        long now = System.currentTimeMillis();
        if (!ctx.channel().isWritable()) {
            if (sseUnwritableSinceMs == 0) {
                sseUnwritableSinceMs = now;
            } else if (now - sseUnwritableSinceMs >= maxLagMs) {
                cutSlowReader();
                return 0;
            }
        } else if (now >= sseEndMs) {
            stopWaiting();
            sseFinish();
            return 0;
        } else if (now - sseLastWriteMs >= settings.longPollMs()) {
            ByteBuf out = ctx.alloc().ioBuffer(128);
            DurableStreamProtocol.writeControlEvent(out, ssePosition, false, nextCursor(), true);
            sseWrite(out);
            ctx.flush();
        }
        return done ? 0 : nowNanos + Math.min(tickMs(), Math.max(1, sseEndMs - now)) * 1_000_000L;
    }

    /** Cuts an SSE reader whose connection stayed unwritable for --max-subscriber-lag: closed, its queue freed. */
    private void cutSlowReader() {
        done = true;
        stopWaiting();
        releaseReaderSlot();
        settings.metrics().durableSseReaders.decrement();
        settings.metrics().slowSubscribersCut.increment();
        settings.metrics().refused(Refusal.SLOW_SUBSCRIBER);
        ctx.close();
    }

    private void sseWrite(ByteBuf out) {
        if (!out.isReadable()) {
            out.release();
            return;
        }
        settings.metrics().durableBytesOut.add(out.readableBytes());
        sseLastWriteMs = System.currentTimeMillis();
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
        } else {
            requestPathBack();
        }
    }

    /** The request path comes back to the connection (its answer, or its next request, goes through the codec). */
    private void requestPathBack() {
        WaitingReader waiting = WaitingReader.of(ctx);
        if (waiting != null) {
            waiting.readerDone();
        }
    }


    private void releaseReaderSlot() {
        if (readerSlot) {
            readerSlot = false;
            streams.releaseReader();
            readerOf.liveReads--;
            readerOf = null;
        }
    }

    private void send(FullHttpResponse r) {
        done = true;
        stopWaiting();
        releaseReaderSlot();
        requestPathBack();
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
