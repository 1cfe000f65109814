package io.iqstream.server.sse;

import org.slf4j.Logger;
import io.netty.channel.Channel;
import org.slf4j.LoggerFactory;
import io.iqstream.server.ServerContext;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunLog;
import io.iqstream.server.run.RunReader;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.run.RunWaiter;
import io.iqstream.server.telemetry.RequestSpans;
import io.iqstream.server.wire.ChunkFramer;
import io.iqstream.server.wire.ReaderTicks;
import io.iqstream.server.wire.WaitingReader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One subscriber's SSE stream: a cursor into its run's log. It writes shared slices of the log's frames while the
 * socket is writable, pauses when it is not and goes on when it drains; it holds no queue of its own. It flushes
 * once per loop turn ({@link #flush()} from the publisher's read-complete); a resume flushes its first segment's
 * frames before it reads the rest of its backlog (each older segment may cost an unpack). On HTTP/1.1 the slices
 * go out as chunks framed by {@link ChunkFramer} below the HTTP encoder (a live event to an idle socket copied
 * with its framing into one buffer, anything else as the slice itself), so a write allocates no heap
 * ({@code RelayAllocationTest}); so do the opening retry line (a buffer made once at start,
 * {@link ServerContext#sseRetryLine}), heartbeats and the protocol's trailer; the response head and the end still go
 * through the encoder.
 *
 * <p>The resume point is decided before the log is touched, in {@code long}: on an ended run a Last-Event-ID at or
 * past its last event answers 204; on an open run one past its last event is 400 {@code bad_last_event_id} (no
 * such event was ever sent); so the cursor only ever names an event the log holds.
 *
 * <p>Bounded work per loop turn: a stream behind its run's tail by more than a few segments (a resume, a reader
 * that fell behind) writes at most {@value #CATCH_UP_BYTES_PER_TURN} bytes, flushes them, and waits for its next
 * share in its loop's {@link CatchUpTurns} (a bounded number of bytes per turn for all its streams together), so a
 * thousand readers catching up at once share the worker with every other connection instead of holding it for
 * seconds. A stream that cannot write now (unwritable socket, or waiting for its share) {@link Run#park parks}:
 * the run no longer calls it per appended event; its channel's writability change, or its share, wakes it. A live
 * reader that keeps up writes the one slice of each new event, never reaches the bound and never parks: that path
 * is unchanged. Its socket's kernel send buffer is fixed at {@value #SEND_BUFFER_BYTES} bytes (see there).
 *
 * <p>An HTTP/1.0 subscriber gets an HTTP/1.0 response without chunked encoding, ended by closing the connection.
 *
 * <p>Confined to the run's worker loop.
 */
public final class SubscriberStream implements RunReader, RunWaiter, ReaderTicks.Ticked {
    private static final Logger LOG = LoggerFactory.getLogger(SubscriberStream.class);
    private static final ByteBuf HEARTBEAT = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(6).writeBytes(": hb\n\n".getBytes(StandardCharsets.US_ASCII))).asReadOnly();
    /**
     * Bytes of history one stream writes in one loop turn before it yields to the next turn: two segments. Small
     * enough that a thousand streams catching up cost a turn a few tens of ms on a busy 2-CPU VM, large enough that
     * a resume is a few writes per turn ({@code HostileFloodTest}).
     */
    static final int CATCH_UP_BYTES_PER_TURN = 2 * RunLog.SEGMENT_BYTES;
    /**
     * The kernel send buffer a subscriber's socket gets (SO_SNDBUF; Linux doubles it for its bookkeeping and stops
     * growing it). Left to autotuning, a socket whose reader never reads took about 2 MiB of kernel memory on
     * loopback: a thousand of them pushed the host's TCP memory to its hard limit, where every socket's packets
     * are dropped and a status request waited 13 s for retransmits ({@code HostileFloodTest}). 128 KiB bounds
     * that at readers x 256 KiB; it still carries 2.5 MB/s per reader at a 100 ms round trip, far above a run's
     * live rate (a long resume over such a link takes longer). Netty's outbound buffer (its 256 KiB high-water
     * mark) is above it, as before.
     */
    static final int SEND_BUFFER_BYTES = 128 * 1024;
    private static final AsciiString EVENT_STREAM = AsciiString.cached("text/event-stream; charset=utf-8");
    private static final AsciiString X_ACCEL_BUFFERING = AsciiString.cached("X-Accel-Buffering");
    private static final AsciiString NO = AsciiString.cached("no");

    private final ChannelHandlerContext ctx;
    /** The request; null once the stream began (a streaming reader answers nothing more that needs it). */
    private HttpRequest request;
    private final ServerContext server;
    private final RunRegistry registry;
    private final String runId;
    private final boolean keepAlive;
    private final boolean http10;
    private final long resumeAfter;
    private final Metrics metrics;
    private final ServerConfig config;
    private Run run;
    private int nextId;
    /** The last event id this stream writes: the run's tail when it began for {@code ?live=false}, else unbounded. */
    private int untilId = Integer.MAX_VALUE;
    private boolean snapshot;
    /** {@code ?ifRunning=true}: a read of a running run only (an ended one 409, a missing one 404 at once). */
    private boolean ifRunning;
    private boolean started;
    private boolean done;
    private boolean pendingFlush;
    /** Off the run's per-append list ({@link Run#park}) until its socket drains or its next-turn task runs. */
    private boolean parked;
    /** Waiting in its loop's {@link CatchUpTurns} for a share of a coming turn. */
    private boolean queued;
    /** Bytes of frames written so far. */
    private long bytesWritten;
    private long lastWriteNanos;
    private long unwritableSinceNanos;
    /** When the log last refused to unpack a segment for this stream (budget full), or 0. */
    private long memoryWaitSinceNanos;
    /** The await-run timeout while it waits for its run; null once streaming (its loop's {@link #ticks} then). */
    private ScheduledFuture<?> timer;
    /** Its loop's reader timers, where its tick (heartbeat, lag cut) has a slot while it streams; or null. */
    private ReaderTicks ticks;
    private int tickSlot = -1;
    private boolean holdsSlot;
    /** The HTTP codec's context, to write chunks below it ({@link ChunkFramer}); null for HTTP/1.0. */
    private ChannelHandlerContext codec;
    /** Why {@link #tick} closed the connection ({@code cut_slow}, {@code cut_memory}), for its span; or null. */
    private String cutBy;

    /**
     * @param lastEventId the subscriber's resume point, 0 to {@code Integer.MAX_VALUE} (validated by the caller)
     */
    public SubscriberStream(ChannelHandlerContext ctx, HttpRequest request, ServerContext server,
            RunRegistry registry, String runId, long lastEventId, boolean keepAlive) {
        this.ctx = ctx;
        this.request = request;
        this.server = server;
        this.registry = registry;
        this.runId = runId;
        this.resumeAfter = lastEventId;
        this.http10 = request.protocolVersion().equals(HttpVersion.HTTP_1_0);
        this.keepAlive = keepAlive;
        this.metrics = server.metrics();
        this.config = server.config();
    }

    /**
     * Makes this a read that ends at the run's tail as it is when the stream begins ({@code ?live=false}): a run
     * that does not exist is 404 at once, without waiting for it. Call before {@link #start()}.
     */
    public void endAtTail() {
        snapshot = true;
    }

    /**
     * Makes this a read of a running run only ({@code ?ifRunning=true}, an AI SDK resume in one request): an ended
     * run is answered 409 {@code run_ended} and nothing is streamed; a run that does not exist is 404 at once,
     * without waiting for it. Call before {@link #start()}.
     */
    public void onlyIfRunning() {
        ifRunning = true;
    }

    /** Finds the run, or waits for it (await-run), or answers 404/410. */
    public void start() {
        if (!server.budget().tryAdmitSubscriber()) {
            refuse(Refusal.OVER_BUDGET, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "subscriber connections are at their cap (" + server.budget().maxSubscribers() + ")");
            return;
        }
        holdsSlot = true;
        Run r = registry.get(runId);
        if (r != null) {
            attach(r);
            return;
        }
        if (registry.isGone(runId)) {
            refuse(Refusal.GONE, HttpResponseStatus.GONE, "run " + runId + " has expired");
            return;
        }
        if (config.awaitRunMs() <= 0 || snapshot || ifRunning) {
            refuse(Refusal.NOT_FOUND, HttpResponseStatus.NOT_FOUND, "no run " + runId);
            return;
        }
        if (server.isDraining()) {
            serverDraining();
            return;
        }
        registry.await(runId, this);
        timer = ctx.executor().schedule(() -> {
            if (run == null && !done) {
                registry.stopAwaiting(runId, this);
                refuse(Refusal.NOT_FOUND, HttpResponseStatus.NOT_FOUND,
                        "no run " + runId + " appeared within " + config.awaitRunMs() + " ms");
            }
        }, config.awaitRunMs(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void runCreated(Run created) {
        cancelTimer();
        if (!done && ctx.channel().isActive()) {
            attach(created);
        }
    }

    @Override
    public void serverDraining() {
        if (!done) {
            refuse(Refusal.DRAINING, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "server is draining: run " + runId + " will not be created here");
        }
    }

    private void attach(Run r) {
        if (ifRunning && r.isEnded()) {
            refuse(Refusal.RUN_ENDED, HttpResponseStatus.CONFLICT,
                    "run " + runId + " has already ended (?ifRunning=true: not read)");
            return;
        }
        long last = r.lastEventId();
        // a run being restored by its publisher (its node was lost): a reader may resume within the events to come
        if (resumeAfter > last && !r.isEnded() && resumeAfter > r.restoreToId()) {
            refuse(Refusal.BAD_REQUEST, HttpResponseStatus.BAD_REQUEST, "bad_last_event_id",
                    "Last-Event-ID " + resumeAfter + " is beyond the run's last event " + last);
            return;
        }
        if (r.isEnded() && resumeAfter >= last) {
            // the browser already has everything: 204 stops EventSource from reconnecting
            done = true;
            releaseSlot();
            RequestSpans.readerEnded(ctx.channel(), 0, "nothing_new");
            server.replies().empty(ctx, request, HttpResponseStatus.NO_CONTENT, keepAlive);
            return;
        }
        if (r.isSpilled()) {
            // an ended run at rest is on disk only: its bytes come back first, read on the worker's storage thread
            registry.load(r, ok -> {
                if (done || !ctx.channel().isActive()) {
                    return; // closed meanwhile: closed() gave the slot back
                }
                if (ok && !r.isDropped()) {
                    attach(r);
                } else if (r.isDropped()) {
                    refuse(Refusal.GONE, HttpResponseStatus.GONE, "run " + runId + " has expired");
                } else {
                    refuse(Refusal.OVER_BUDGET, HttpResponseStatus.SERVICE_UNAVAILABLE,
                            "this ended run's history cannot be loaded from disk now; retry");
                }
            });
            return;
        }
        // resumeAfter < last <= Integer.MAX_VALUE here, so the next id fits an int
        nextId = (int) (resumeAfter + 1);
        if (snapshot) {
            untilId = (int) last;
        }
        ByteBuf first = null;
        if (nextId <= last) {
            // a packed segment is read through a shared unpacked copy the budget must take: ask before answering
            first = r.log().readFrom(nextId, untilId);
            if (first == null) {
                refuse(Refusal.OVER_BUDGET, HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "the memory budget cannot unpack this run's history now; retry");
                return;
            }
        }
        run = r;
        if (ctx.channel().isActive()) {
            // once per stream, not per event (a transport without the option, e.g. a test's channel, ignores it)
            ctx.channel().config().setOption(ChannelOption.SO_SNDBUF, SEND_BUFFER_BYTES);
        }
        HttpResponse response = new DefaultHttpResponse(http10 ? HttpVersion.HTTP_1_0 : HttpVersion.HTTP_1_1,
                HttpResponseStatus.OK);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, EVENT_STREAM)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE)
                .set(X_ACCEL_BUFFERING, NO);
        r.protocol().readerHeaders(response.headers());
        if (http10) {
            // no chunked encoding in HTTP/1.0: the body runs to the close
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else {
            response.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        server.cors().apply(request, response.headers());
        // nothing watches this write's outcome: a void promise (a failure goes to the pipeline's exceptionCaught)
        ctx.write(response, ctx.voidPromise());
        WaitingReader waiting = http10 ? null : WaitingReader.of(ctx);
        if (waiting != null) {
            // the log's frames go out as chunks written below the codec, which has the response head by now and
            // leaves the pipeline while the stream is open (a fresh one comes back at its end)
            codec = waiting.belowCodec();
            waiting.readerWaiting();
        } else if (!http10) {
            codec = ctx.pipeline().context(HttpServerCodec.class);
        }
        request = null;
        writeChunk(server.sseRetryLine());
        started = true;
        lastWriteNanos = System.nanoTime();
        metrics.subscribersActive.increment();
        metrics.subscribersTotal.increment();
        RequestSpans.readerAttached(ctx.channel(), r, resumeAfter, last - resumeAfter);
        run.addReader(this);
        if (first != null) {
            // the first replayed frames go out now: the rest of a long replay (more unpacks) follows behind them
            writeFrames(first, (int) Math.min(r.log().lastIdInSegmentOf(nextId), untilId));
            ctx.flush();
        }
        // the rest of a replay in shares of coming turns (a live stream: nothing more to write now)
        pump(0);
        if (!done) {
            ctx.flush();
            pendingFlush = false;
            // one sweep per loop ticks every stream (ReaderTicks): no timer task per stream
            ticks = ReaderTicks.of(ctx.executor());
            ticks.add(this, System.nanoTime() + tickMs() * 1_000_000L, tickMs());
        }
    }

    /**
     * Writes what the socket will take; ends the response after the run's end (with its protocol's trailer).
     * Does not flush.
     */
    private void pump() {
        pump(CATCH_UP_BYTES_PER_TURN);
    }

    /** As {@link #pump()}, writing at most {@code maxBytes} (and at least one slice when positive) now. */
    private void pump(int maxBytes) {
        if (done || run == null) {
            return;
        }
        RunLog log = run.log();
        int last = Math.min(run.lastEventId(), untilId);
        int bytesLeft = maxBytes;
        while (nextId <= last) {
            if (!ctx.channel().isWritable()) {
                // writabilityChanged wakes it: not called per appended event until then
                park();
                break;
            }
            if (bytesLeft <= 0) {
                // this turn's share written: the rest in a coming turn, after the other connections' I/O
                waitForShare();
                break;
            }
            ByteBuf slice = log.readFrom(nextId, last);
            if (slice == null) {
                // the budget cannot take this segment's unpacked copy now: tick retries, cut past the lag limit
                if (memoryWaitSinceNanos == 0) {
                    memoryWaitSinceNanos = System.nanoTime();
                }
                break;
            }
            memoryWaitSinceNanos = 0;
            bytesLeft -= slice.readableBytes();
            writeFrames(slice, (int) Math.min(log.lastIdInSegmentOf(nextId), last));
        }
        if (pendingFlush) {
            lastWriteNanos = System.nanoTime();
            if (nextId > last) {
                metrics.relayLatency(lastWriteNanos - run.lastAppendNanos());
            }
        }
        if ((run.isEnded() || snapshot) && nextId > last) {
            finish();
        }
    }

    /**
     * Leaves the run's per-append list; flushes what this turn wrote, as the run's {@link Run#flushReaders} no
     * longer reaches it.
     */
    private void park() {
        if (!parked) {
            parked = true;
            run.park(this);
        }
        flush();
    }

    private void wake() {
        if (parked) {
            parked = false;
            if (run != null) {
                run.wake(this);
            }
        }
    }

    private void waitForShare() {
        if (!queued) {
            queued = true;
            CatchUpTurns.of(ctx.executor()).add(this);
        }
        park();
    }

    /**
     * Its share of a turn ({@link CatchUpTurns}): writes at most {@code maxBytes} more of the history and flushes.
     *
     * @return the bytes written
     */
    int catchUp(int maxBytes) {
        queued = false;
        if (done || run == null) {
            return 0;
        }
        wake();
        long before = bytesWritten;
        pump(maxBytes);
        flush();
        return (int) (bytesWritten - before);
    }

    /** Writes {@code slice}, the frames of events {@code nextId} to {@code upTo}, and moves past them. */
    private void writeFrames(ByteBuf slice, int upTo) {
        metrics.framesOut.add(upTo - nextId + 1);
        metrics.bytesOut.add(slice.readableBytes());
        bytesWritten += slice.readableBytes();
        writeChunk(slice);
        pendingFlush = true;
        nextId = upTo + 1;
    }

    /**
     * Writes {@code data} as a piece of the body (frames, the retry line, a heartbeat, the protocol's trailer): below
     * the encoder on HTTP/1.1 ({@link ChunkFramer}). Does not flush.
     */
    private void writeChunk(ByteBuf data) {
        if (codec != null) {
            ChunkFramer.of().write(codec, data);
        } else {
            ctx.write(new DefaultHttpContent(data), ctx.voidPromise());
        }
    }

    private void finish() {
        if (done) {
            return;
        }
        done = true;
        cancelTimer();
        releaseSlot();
        if (run != null) {
            run.removeReader(this);
        }
        if (started) {
            metrics.subscribersActive.decrement();
            // the protocol's last line after the run's last event (UI message stream: data: [DONE]); not after a
            // tail read (?live=false) of a run that goes on
            ByteBuf trailer = run != null && run.isEnded() && nextId > run.lastEventId()
                    ? run.protocol().readerTrailer() : null;
            if (trailer != null) {
                writeChunk(trailer.duplicate());
            }
            RequestSpans.readerEnded(ctx.channel(), nextId - 1 - resumeAfter,
                    run != null && run.isEnded() ? "ended" : "tail");
            if (keepAlive && !http10) {
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                WaitingReader waiting = WaitingReader.of(ctx);
                if (waiting != null) {
                    waiting.readerDone(); // the connection's next request is decoded as any other
                }
            } else {
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
            }
        }
    }

    /** Whether the stream's response head has been written and its end not yet (a reply can no longer be sent). */
    public boolean isStreaming() {
        return started && !done;
    }

    /** Whether the 200 response head has been written (the stream began; it may have ended since). */
    public boolean hasBegun() {
        return started;
    }

    /** Whether the response has ended (the connection may serve another request). */
    public boolean isDone() {
        return done;
    }

    @Override
    public Channel channel() {
        return ctx.channel();
    }

    @Override
    public void eventsAvailable() {
        pump();
    }

    @Override
    public void flush() {
        if (pendingFlush && !done) {
            pendingFlush = false;
            ctx.flush();
        }
    }

    @Override
    public void runDropped() {
        run = null;
        if (!done) {
            done = true;
            cancelTimer();
            releaseSlot();
            if (started) {
                metrics.subscribersActive.decrement();
                RequestSpans.readerEnded(ctx.channel(), nextId - 1 - resumeAfter, "run_dropped");
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
            }
        }
    }

    /** The socket drained (or filled). */
    public void writabilityChanged() {
        if (ctx.channel().isWritable()) {
            unwritableSinceNanos = 0;
            if (queued) {
                // its share in a coming turn writes on (and wakes it)
                return;
            }
            wake();
            pump();
            flush();
        } else if (unwritableSinceNanos == 0) {
            unwritableSinceNanos = System.nanoTime();
        }
    }

    /** The connection closed. */
    public void closed() {
        releaseSlot();
        if (run == null && !done) {
            registry.stopAwaiting(runId, this);
        }
        if (!done) {
            done = true;
            cancelTimer();
            if (run != null) {
                run.removeReader(this);
            }
            if (started) {
                metrics.subscribersActive.decrement();
                RequestSpans.readerEnded(ctx.channel(), nextId - 1 - resumeAfter,
                        cutBy != null ? cutBy : "client_closed");
            }
        }
    }

    /** How often its tick runs: the heartbeat's period, or a quarter of the lag limit when that is shorter. */
    private long tickMs() {
        return Math.min(config.heartbeatMs(), Math.max(10, config.maxSubscriberLagMs() / 4));
    }

    @Override
    public int tickSlot() {
        return tickSlot;
    }

    @Override
    public void tickSlot(int slot) {
        tickSlot = slot;
    }

    @Override
    public long tick(long now) {
        tickNow(now);
        return done ? 0 : now + tickMs() * 1_000_000L;
    }

    private void tickNow(long now) {
        if (done) {
            return;
        }
        if (memoryWaitSinceNanos != 0) {
            if (now - memoryWaitSinceNanos > config.maxSubscriberLagMs() * 1_000_000L) {
                metrics.slowSubscribersCut.increment();
                metrics.refused(Refusal.OVER_BUDGET);
                LOG.info("cut subscriber of run {} at event {}: no memory to unpack its history for {} ms", runId,
                        nextId - 1, (now - memoryWaitSinceNanos) / 1_000_000);
                cutBy = "cut_memory";
                ctx.close();
                return;
            }
            pump();
            flush();
            if (done) {
                return;
            }
        }
        if (!ctx.channel().isWritable()) {
            if (unwritableSinceNanos == 0) {
                unwritableSinceNanos = now;
            } else if (now - unwritableSinceNanos > config.maxSubscriberLagMs() * 1_000_000L) {
                metrics.slowSubscribersCut.increment();
                metrics.refused(Refusal.SLOW_SUBSCRIBER);
                LOG.info(
                        "cut slow subscriber of run {} at event {} (socket full for {} ms)", runId, nextId - 1,
                        (now - unwritableSinceNanos) / 1_000_000);
                cutBy = "cut_slow";
                ctx.close();
            }
            return;
        }
        if (now - lastWriteNanos >= config.heartbeatMs() * 1_000_000L) {
            lastWriteNanos = now;
            writeChunk(HEARTBEAT.duplicate());
            ctx.flush();
        }
    }

    private void releaseSlot() {
        if (holdsSlot) {
            holdsSlot = false;
            server.budget().releaseSubscriber();
        }
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        if (ticks != null) {
            ticks.remove(this);
            ticks = null;
        }
    }

    private void refuse(Refusal reason, HttpResponseStatus status, String message) {
        refuse(reason, status, null, message);
    }

    private void refuse(Refusal reason, HttpResponseStatus status, String code, String message) {
        done = true;
        cancelTimer();
        releaseSlot();
        server.metrics().refused(reason);
        RequestSpans.readerEnded(ctx.channel(), 0, code != null ? code : reason.label());
        server.replies().error(ctx, request, code != null ? code : reason.label(), status, message, keepAlive);
    }
}
