package io.iqstream.server.ingest;

import io.iqstream.server.ServerContext;
import io.iqstream.server.config.Quantities;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.metrics.Refusal;
import io.iqstream.server.run.AppendOutcome;
import io.iqstream.server.telemetry.RequestSpans;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunProtocol;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.run.ThreadIndex;
import io.iqstream.server.wire.HttpReplies;
import io.iqstream.server.wire.Json;
import io.iqstream.server.wire.LastEventId;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One publishing request ({@code POST /v1/runs/{id}/events}) attached to its run: body chunks in, events appended
 * as each is cut out, one reply at the end (or an error that stops the body at the bad event).
 *
 * <p>Confined to the run's worker loop (the connection was moved there before this was made).
 *
 * <p>Limits: an event that spans body chunks is held by the splitter in pooled memory charged to the budget, at
 * most {@code --max-event-bytes} (413 {@code event_too_large} past it, 503 {@code over_budget} when the budget
 * cannot hold it). A request that delivers no event and no keep-alive (blank NDJSON line, SSE comment, whitespace
 * between JSON elements) for {@code --run-idle-timeout} ends its run with its protocol's idle end (AG-UI:
 * {@code RUN_ERROR} {@code RUN_IDLE}; UI message stream: an {@code error} chunk) and is
 * answered 408 {@code run_idle}, so a stalled publisher cannot hold a run (and its publisher slot) forever.
 */
public final class PublishSession implements EventSink {
    private static final Logger LOG = LoggerFactory.getLogger(PublishSession.class);
    /** The publisher's belief of the run's last event id, checked by {@link #continuesRun}. */
    private static final String LAST_EVENT_ID = "Last-Event-ID";
    /** How long the run may go without a publishing request before it ends PUBLISHER_LOST (docs/API.md). */
    static final String PUBLISHER_LEASE = "X-IQStream-Publisher-Lease";
    /** A publisher restoring a run whose node was lost: the body starts with its events 1..N (the value, N). */
    public static final String RESTORE = "X-IQStream-Restore";
    private final ChannelHandlerContext ctx;
    private final HttpRequest request;
    private final ServerContext server;
    private final RunRegistry registry;
    private final Run run;
    private final EventSplitter splitter;
    private final EventValidator validator;
    private final boolean keepAlive;
    private final long maxEventBytes;
    private final long idleTimeoutNanos;
    private long position;
    /** The last event was of a closing type: the body's end right after it ends the run. */
    private boolean lastClosing;
    private boolean finished;
    private boolean active;
    private long lastActiveNanos;
    private ScheduledFuture<?> idleCheck;

    private PublishSession(ChannelHandlerContext ctx, HttpRequest request, ServerContext server, RunRegistry registry,
            Run run, EventSplitter splitter, boolean keepAlive) {
        this.ctx = ctx;
        this.request = request;
        this.server = server;
        this.registry = registry;
        this.run = run;
        this.splitter = splitter;
        this.validator = new EventValidator(run.protocol(), splitter.isSse());
        this.keepAlive = keepAlive;
        this.maxEventBytes = server.config().maxEventBytes();
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(server.config().runIdleTimeoutMs());
        this.lastActiveNanos = System.nanoTime();
    }

    /**
     * Checks the run's state and attaches a new publisher to it, creating the run (in the protocol the request
     * declares, {@link RunProtocol#declaredBy}) if there is none. Returns null after answering the refusal (400
     * {@code unsupported_protocol}, 409 {@code protocol_mismatch} and the rest: 409, 410, 415, 503).
     */
    public static PublishSession open(ChannelHandlerContext ctx, HttpRequest request, ServerContext server,
            RunRegistry registry, String runId, boolean keepAlive) {
        HttpReplies replies = server.replies();
        Metrics metrics = server.metrics();
        EventSplitter splitter = EventSplitter.forContentType(request.headers().get(HttpHeaderNames.CONTENT_TYPE),
                (int) server.config().maxEventBytes(), ctx.alloc(), server.budget());
        if (splitter == null) {
            metrics.refused(Refusal.UNSUPPORTED_MEDIA_TYPE);
            replies.error(ctx, request, Refusal.UNSUPPORTED_MEDIA_TYPE, HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                    "Content-Type must be application/x-ndjson, application/jsonl, text/event-stream or "
                            + "application/json", false);
            return null;
        }
        long leaseMs = publisherLeaseMs(ctx, request, server);
        if (leaseMs == LEASE_REFUSED) {
            splitter.release();
            return null;
        }
        long restoreToId = restoreToId(ctx, request, server);
        if (restoreToId < 0) {
            splitter.release();
            return null;
        }
        RunProtocol protocol = RunProtocol.declaredBy(request.headers());
        if (protocol == null) {
            splitter.release();
            metrics.refused(Refusal.BAD_REQUEST);
            replies.error(ctx, request, "unsupported_protocol", HttpResponseStatus.BAD_REQUEST,
                    RunProtocol.UI_MESSAGE_STREAM_HEADER + " must be " + RunProtocol.UI_MESSAGE_STREAM_VERSION
                            + " (the AI SDK's UI message stream), or absent (AG-UI)", false);
            return null;
        }
        Run run = registry.get(runId);
        if (!continuesRun(ctx, request, server, registry, runId, run)) {
            splitter.release();
            return null;
        }
        if (run != null && run.protocol() != protocol) {
            splitter.release();
            metrics.refused(Refusal.BAD_REQUEST);
            replies.error(ctx, request, "protocol_mismatch", HttpResponseStatus.CONFLICT, "run " + runId + " is "
                    + run.protocol().label() + ", this request is " + protocol.label() + " ("
                    + RunProtocol.UI_MESSAGE_STREAM_HEADER + "); nothing was appended", false);
            return null;
        }
        String refusal = null;
        if (run != null && run.publisher() != null) {
            refusal = "publisher_active";
        } else if (run != null && run.isEnded()) {
            refusal = "run_ended";
        } else if (run == null && registry.isGone(runId)) {
            refusal = "run_ended";
        }
        if (refusal != null) {
            splitter.release();
            Refusal r = refusal.equals("publisher_active") ? Refusal.PUBLISHER_ACTIVE : Refusal.RUN_ENDED;
            metrics.refused(r);
            replies.error(ctx, request, r, HttpResponseStatus.CONFLICT, r == Refusal.PUBLISHER_ACTIVE
                    ? "another publishing request is open on run " + runId
                    : "run " + runId + " has ended", false);
            return null;
        }
        if (run == null) {
            if (server.isDraining()) {
                splitter.release();
                metrics.refused(Refusal.DRAINING);
                replies.error(ctx, request, Refusal.DRAINING, HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "server is draining: no new runs", false);
                return null;
            }
            run = registry.create(runId, protocol, restoreToId);
            if (run != null && restoreToId > 0) {
                metrics.cluster.restored();
                LOG.info("run {} restored by its publisher: events 1..{} follow", runId, restoreToId);
            }
            if (run == null) {
                splitter.release();
                metrics.refused(Refusal.OVER_BUDGET);
                replies.error(ctx, request, Refusal.OVER_BUDGET, HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "memory budget full: no room for a new run", false);
                return null;
            }
        }
        if (leaseMs >= 0) {
            run.publisherLeaseMs(leaseMs);
        }
        PublishSession session = new PublishSession(ctx, request, server, registry, run, splitter, keepAlive);
        run.publisher(session);
        registry.publisherAttached(run);
        metrics.publishersActive.increment();
        session.scheduleIdleCheck(session.idleTimeoutNanos);
        RequestSpans.publishOpened(ctx.channel(), run, restoreToId);
        return session;
    }

    private static final long LEASE_REFUSED = -2;

    /**
     * The request's {@code X-IQStream-Restore: N} (a publisher restoring a run whose node was lost, the body
     * starting with its events 1..N): N, 0 when absent, -1 after answering 400 {@code bad_restore} (not an id from
     * 1 to {@link LastEventId#MAX}, or a {@code Last-Event-ID} other than 0: a restore starts at event 1).
     */
    private static long restoreToId(ChannelHandlerContext ctx, HttpRequest request, ServerContext server) {
        String header = request.headers().get(RESTORE);
        if (header == null) {
            return 0;
        }
        long n = LastEventId.parse(header);
        if (n > 0 && LastEventId.parse(request.headers().get(LAST_EVENT_ID)) == 0) {
            return n;
        }
        server.metrics().refused(Refusal.BAD_REQUEST);
        server.replies().error(ctx, request, "bad_restore", HttpResponseStatus.BAD_REQUEST, RESTORE
                + " must be the run's last event id before it was lost, from 1 to " + LastEventId.MAX
                + ", with Last-Event-ID 0 or absent (a restore resends the run from event 1)", false);
        return -1;
    }

    /**
     * The request's {@code X-IQStream-Publisher-Lease} in milliseconds (a duration as flags take it, {@code 0} to
     * {@code --run-idle-timeout}), -1 when absent; {@link #LEASE_REFUSED} after answering 400
     * {@code bad_publisher_lease}.
     */
    private static long publisherLeaseMs(ChannelHandlerContext ctx, HttpRequest request, ServerContext server) {
        String header = request.headers().get(PUBLISHER_LEASE);
        if (header == null) {
            return -1;
        }
        long maxMs = server.config().runIdleTimeoutMs();
        long ms;
        try {
            ms = Quantities.parseDurationMs(header);
        } catch (RuntimeException e) {
            ms = -1;
        }
        if (ms >= 0 && ms <= maxMs) {
            return ms;
        }
        server.metrics().refused(Refusal.BAD_REQUEST);
        server.replies().error(ctx, request, "bad_publisher_lease", HttpResponseStatus.BAD_REQUEST,
                PUBLISHER_LEASE + " must be a duration such as 500ms or 5s, from 0 to --run-idle-timeout ("
                        + Quantities.formatDurationMs(maxMs) + ")", false);
        return LEASE_REFUSED;
    }

    /**
     * The publisher's own view of the run, {@code Last-Event-ID} on the POST (the last id it believes the run has):
     * absent, it is not checked. A run that exists with another last id is 409 {@code event_id_mismatch} (with the
     * actual id); no run at all (never created here, retention passed, or its node died) while the header says
     * N &gt; 0 is 409 {@code run_lost}, never a fresh run that starts again at id 1. Answers the refusal and returns
     * false; true when the request may go on.
     */
    private static boolean continuesRun(ChannelHandlerContext ctx, HttpRequest request, ServerContext server,
            RunRegistry registry, String runId, Run run) {
        String header = request.headers().get(LAST_EVENT_ID);
        if (header == null) {
            return true;
        }
        long believed = LastEventId.parse(header);
        HttpReplies replies = server.replies();
        if (believed == LastEventId.MALFORMED) {
            server.metrics().refused(Refusal.BAD_REQUEST);
            replies.error(ctx, request, "bad_last_event_id", HttpResponseStatus.BAD_REQUEST,
                    "Last-Event-ID must be an integer event id from 0 to " + LastEventId.MAX, false);
            return false;
        }
        if (run != null && run.lastEventId() != believed) {
            server.metrics().refused(Refusal.EVENT_ID_MISMATCH);
            replies.publishError(ctx, request, Refusal.EVENT_ID_MISMATCH.label(), HttpResponseStatus.CONFLICT,
                    "run " + runId + " has last event id " + run.lastEventId() + ", not " + believed
                            + " (Last-Event-ID): nothing was appended", 0, runId, run.lastEventId());
            return false;
        }
        if (run == null && believed > 0) {
            server.metrics().refused(Refusal.RUN_LOST);
            StringBuilder sb = new StringBuilder(160).append("{\"error\":\"run_lost\",\"message\":");
            Json.quote(sb, "no node holds run " + runId + " any more (it ended and its retention passed, or its "
                    + "node stopped): its events after id 0 are lost; nothing was appended");
            sb.append(",\"position\":0,\"runId\":");
            Json.quote(sb, runId);
            sb.append('}');
            replies.json(ctx, request, HttpResponseStatus.CONFLICT, sb.toString(), false);
            return false;
        }
        return true;
    }

    private void scheduleIdleCheck(long delayNanos) {
        idleCheck = registry.loop().schedule(this::checkIdle, delayNanos, TimeUnit.NANOSECONDS);
    }

    /** The idle timer: ends the run unless an event or keep-alive arrived within the timeout (then re-arms). */
    private void checkIdle() {
        idleCheck = null;
        if (finished) {
            return;
        }
        long idleNanos = System.nanoTime() - lastActiveNanos;
        if (idleNanos < idleTimeoutNanos) {
            scheduleIdleCheck(idleTimeoutNanos - idleNanos);
            return;
        }
        finished = true;
        run.flushReaders();
        detach();
        if (!run.isEnded()) {
            server.metrics().runsIdled.increment();
            registry.endWithError(run, "RUN_IDLE", "run idle: the publishing request sent no event");
        }
        RequestSpans.publishEnded(ctx.channel(), run, position, "run_idle");
        server.replies().publishError(ctx, request, "run_idle", HttpResponseStatus.REQUEST_TIMEOUT,
                "no event for " + TimeUnit.NANOSECONDS.toMillis(idleTimeoutNanos)
                        + " ms (--run-idle-timeout): the run was ended (RUN_IDLE)", position + 1,
                run.id(), run.lastEventId());
    }

    /**
     * Data of the body read below the HTTP codec (the HTTP layer's chunked body reader: a chunked body's data chunks).
     * Takes ownership of {@code data}.
     */
    public void onBody(ByteBuf data) {
        try {
            if (!finished) {
                feed(data);
            }
        } finally {
            data.release();
        }
    }

    /** Feeds {@code buf} to the splitter; false when the body stops here (an error was answered). */
    private boolean feed(ByteBuf buf) {
        boolean go = !buf.isReadable() || splitter.feed(buf, this);
        if (active) {
            active = false;
            lastActiveNanos = System.nanoTime();
        }
        return go;
    }

    /** A chunk of the body as the HTTP codec decoded it (and its end). Takes ownership of {@code content}. */
    public void onContent(HttpContent content) {
        try {
            if (finished || !feed(content.content())) {
                return;
            }
            if (content instanceof LastHttpContent && !finished) {
                if (splitter.finish(this) && !finished) {
                    complete();
                }
            }
        } finally {
            content.release();
        }
    }

    /** End of one socket read: flush what the subscribers were given, once. */
    public void onReadComplete() {
        run.flushReaders();
    }

    /** The connection closed. Before the body's end, the publisher is lost. */
    public void onClosed() {
        if (!finished) {
            finished = true; // nothing is fed to the released splitter after this
            detach();
            registry.publisherLost(run);
            RequestSpans.publishEnded(ctx.channel(), run, position, "publisher_lost");
        }
    }

    /**
     * The run was stopped ({@code DELETE /v1/runs/{id}}) while this request was open: answered at once with 409
     * {@code run_stopped} (and the run's last event id), so the producer learns within a round trip; the rest of
     * the body is not read. The caller has already ended the run.
     */
    public void stopped() {
        if (finished) {
            return;
        }
        finished = true;
        detach();
        RequestSpans.publishEnded(ctx.channel(), run, position, "stopped");
        server.replies().publishError(ctx, request, "run_stopped", HttpResponseStatus.CONFLICT,
                "run " + run.id() + " was stopped (DELETE); no more events are taken", position, run.id(),
                run.lastEventId());
    }

    /** The publishing connection. */
    public Channel channel() {
        return ctx.channel();
    }

    public boolean isFinished() {
        return finished;
    }

    @Override
    public void onKeepAlive() {
        active = true;
    }

    @Override
    public boolean onEvent(ByteBuf json) {
        position++;
        active = true;
        if (json.readableBytes() > maxEventBytes) {
            return failOversize();
        }
        EventCheck check = validator.check(json);
        lastClosing = check == EventCheck.OK_CLOSING;
        switch (check) {
            case OK, OK_TERMINAL, OK_CLOSING -> { }
            case END_MARKER -> {
                if (run.isEnded()) {
                    return fail(Refusal.RUN_ENDED, null, HttpResponseStatus.CONFLICT, "run " + run.id()
                            + " has ended; nothing is taken after its end");
                }
                registry.endWithoutEvent(run);
                return true;
            }
            case MISSING_TYPE -> {
                return fail(Refusal.BAD_REQUEST, "missing_type", HttpResponseStatus.BAD_REQUEST,
                        validator.lastError());
            }
            case NOT_AN_OBJECT, BAD_UTF8, DUPLICATE_TYPE -> {
                return fail(Refusal.BAD_REQUEST, "bad_event", HttpResponseStatus.BAD_REQUEST,
                        validator.lastError());
            }
            default -> {
                return fail(Refusal.BAD_REQUEST, "bad_json", HttpResponseStatus.BAD_REQUEST, validator.lastError());
            }
        }
        AppendOutcome outcome = registry.append(run, json, check == EventCheck.OK_TERMINAL);
        return switch (outcome) {
            // false when the append ended this session meanwhile (a stop, a refusal): its splitter is released, and
            // going on would hold the rest of the chunk in a buffer nobody releases
            case APPENDED, APPENDED_TERMINAL -> !finished;
            case RUN_ENDED -> fail(Refusal.RUN_ENDED, null, HttpResponseStatus.CONFLICT,
                    "run " + run.id() + " has ended; no event is taken after its end (AG-UI: RUN_FINISHED or "
                            + "RUN_ERROR; UI message stream: [DONE])");
            case RUN_TOO_LARGE -> fail(Refusal.RUN_TOO_LARGE, null, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    "run would exceed " + server.config().maxRunBytes() + " bytes (--max-run-bytes)");
            case OVER_BUDGET -> fail(Refusal.OVER_BUDGET, null, HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "memory budget exhausted");
            case THREAD_FULL -> fail(Refusal.THREAD_FULL, null, HttpResponseStatus.CONFLICT,
                    "the run's thread already holds " + ThreadIndex.MAX_RUNS_PER_THREAD + " runs on this worker: "
                            + "drop ended runs (DELETE) or wait for their retention");
        };
    }

    @Override
    public void onOversizeEvent() {
        position++;
        failOversize();
    }

    @Override
    public void onOverBudget() {
        position++;
        fail(Refusal.OVER_BUDGET, null, HttpResponseStatus.SERVICE_UNAVAILABLE,
                "memory budget full: no room to hold the event being read");
    }

    @Override
    public void onBadEvent(String message) {
        position++;
        fail(Refusal.BAD_REQUEST, "bad_event", HttpResponseStatus.BAD_REQUEST, message);
    }

    private boolean failOversize() {
        return fail(Refusal.EVENT_TOO_LARGE, null, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                "event exceeds " + maxEventBytes + " bytes (--max-event-bytes)");
    }

    @Override
    public void onFramingError(String message) {
        position++;
        fail(Refusal.BAD_REQUEST, "bad_json", HttpResponseStatus.BAD_REQUEST, message);
    }

    private boolean fail(Refusal reason, String code, HttpResponseStatus status, String message) {
        finished = true;
        server.metrics().refused(reason);
        run.flushReaders();
        detach();
        registry.publisherLost(run);
        RequestSpans.publishEnded(ctx.channel(), run, position, code != null ? code : reason.label());
        server.replies().publishError(ctx, request, code != null ? code : reason.label(), status, message, position,
                run.id(), run.lastEventId());
        return false;
    }

    private void complete() {
        finished = true;
        run.flushReaders();
        detach();
        if (lastClosing) {
            registry.endWithoutEvent(run);
        } else if (!run.isEnded()) {
            registry.publisherDone(run);
        }
        RequestSpans.publishEnded(ctx.channel(), run, position, run.isEnded() ? "ended" : "done");
        StringBuilder sb = new StringBuilder(64).append("{\"runId\":");
        Json.quote(sb, run.id());
        sb.append(",\"lastEventId\":").append(run.lastEventId()).append(",\"ended\":").append(run.isEnded())
                .append('}');
        server.replies().json(ctx, request, HttpResponseStatus.OK, sb.toString(), keepAlive);
    }

    private void detach() {
        if (idleCheck != null) {
            idleCheck.cancel(false);
            idleCheck = null;
        }
        if (run.publisher() == this) {
            run.publisher(null);
            server.metrics().publishersActive.decrement();
        }
        splitter.release();
    }
}
