package io.iqstream.server.stream;

import static io.iqstream.server.stream.DurableStreamProtocol.CLOSED;
import static io.iqstream.server.stream.DurableStreamProtocol.CURSOR;
import static io.iqstream.server.stream.DurableStreamProtocol.NEXT_OFFSET;
import static io.iqstream.server.stream.DurableStreamProtocol.UP_TO_DATE;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.wire.CorsPolicy;
import io.iqstream.server.wire.Json;
import io.iqstream.server.wire.HttpReplies;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Serves one Durable Streams request, whole body in hand, on the stream's owner worker: create (PUT, forks
 * included), append and close (POST, with Stream-Seq and idempotent producers), HEAD, DELETE, and reads (GET):
 * catch-up, long-poll and SSE. A live read stays registered at the stream's tail until it is answered, times
 * out, or its connection closes ({@link #closed}).
 *
 * <p>One per request; confined to the owner worker's loop.
 */
public final class StreamExchange implements DurableStream.TailWaiter {
    /** A catch-up answer holds at most this many bytes of messages (at least one message); the rest is paged. */
    static final long MAX_READ_BYTES = 256 * 1024;
    /** An SSE response ends after this long (the client reconnects from its offset), as the protocol allows. */
    static final long SSE_MAX_MS = 60_000;

    static final String CACHE_PUBLIC = "public, max-age=60, stale-while-revalidate=300";
    static final String CACHE_PRIVATE = "private, max-age=60, stale-while-revalidate=300";

    /** What the HTTP layer hands over with the request. */
    public record Settings(DurableStreams streams, Metrics metrics, CorsPolicy cors, HttpReplies replies,
            boolean open, long longPollMs, long maxAppendBytes) {}

    private final Settings settings;
    private final DurableStreams streams;
    private final ChannelHandlerContext ctx;
    private final HttpRequest request;
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

    private StreamExchange(Settings settings, ChannelHandlerContext ctx, HttpRequest request, String path,
            boolean keepAlive) {
        this.settings = settings;
        this.streams = settings.streams();
        this.ctx = ctx;
        this.request = request;
        this.path = path;
        this.keepAlive = keepAlive;
    }

    /**
     * Serves the request; returns the exchange when a live read goes on (its connection must tell it when it
     * closes), else null (answered). {@code body} is released here.
     *
     * @param path the stream's path as the protocol names it ({@code /v1/stream/...}, decoded)
     * @param offsets every {@code offset} parameter given; {@code live}, {@code cursor}: the parameters or null
     */
    public static StreamExchange serve(Settings settings, ChannelHandlerContext ctx, HttpRequest request, String path,
            ByteBuf body, List<String> offsets, String live, String cursor, boolean keepAlive) {
        StreamExchange x = new StreamExchange(settings, ctx, request, path, keepAlive);
        try {
            HttpMethod m = request.method();
            if (m.equals(HttpMethod.PUT)) {
                x.create(body);
            } else if (m.equals(HttpMethod.POST)) {
                x.append(body);
            } else if (m.equals(HttpMethod.GET)) {
                x.read(offsets, live, cursor);
            } else if (m.equals(HttpMethod.HEAD)) {
                x.head();
            } else if (m.equals(HttpMethod.DELETE)) {
                x.delete();
            } else {
                FullHttpResponse r = x.response(HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed");
                r.headers().set(HttpHeaderNames.ALLOW, DurableStreamProtocol.CORS_METHODS);
                x.send(r);
            }
        } finally {
            body.release();
        }
        return x.done ? null : x;
    }

    // ---- create ---------------------------------------------------------------------------------------------

    private void create(ByteBuf body) {
        HttpHeaders h = request.headers();
        String contentType = h.get(HttpHeaderNames.CONTENT_TYPE);
        String forkedFrom = h.get(DurableStreamProtocol.FORKED_FROM);
        String forkOffset = h.get(DurableStreamProtocol.FORK_OFFSET);
        String subOffsetText = h.get(DurableStreamProtocol.FORK_SUB_OFFSET);
        String ttlText = h.get(DurableStreamProtocol.TTL);
        String expiresAt = h.get(DurableStreamProtocol.EXPIRES_AT);
        boolean createClosed = "true".equals(h.get(CLOSED));
        if (!DurableStreamProtocol.isMediaType(contentType)) {
            contentType = null;
        }
        if (ttlText != null && expiresAt != null) {
            refuse(HttpResponseStatus.BAD_REQUEST, "give Stream-TTL or Stream-Expires-At, not both");
            return;
        }
        long ttl = -1;
        if (ttlText != null) {
            ttl = DurableStreamProtocol.ttlSeconds(ttlText.trim());
            if (ttl < 0) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-TTL must be a whole number of seconds");
                return;
            }
        }
        long expiresAtMs = 0;
        if (expiresAt != null) {
            expiresAtMs = timestampMs(expiresAt.trim());
            if (expiresAtMs == Long.MIN_VALUE) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Expires-At must be an RFC 3339 timestamp");
                return;
            }
        }
        if (forkOffset != null && DurableStreamProtocol.position(forkOffset) < 0) {
            refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Offset must be an offset");
            return;
        }
        long subOffset = 0;
        if (subOffsetText != null) {
            if (forkedFrom == null) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Sub-Offset needs Stream-Forked-From");
                return;
            }
            subOffset = DurableStreamProtocol.ttlSeconds(subOffsetText.trim());
            if (subOffset < 0) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Sub-Offset must be a non-negative integer");
                return;
            }
        }
        long now = System.currentTimeMillis();
        DurableStream existing = streams.get(path, now);
        if (existing != null) {
            if (existing.softDeleted) {
                refuse(HttpResponseStatus.CONFLICT, "the stream was deleted but its forks still read it: the path "
                        + "cannot be reused until they are gone");
                return;
            }
            String parentPath = existing.parent == null ? null : existing.parent.path;
            boolean inherits = existing.parent != null && ttlText == null && expiresAt == null;
            boolean same = DurableStreamProtocol.mediaType(orDefault(contentType, existing.contentType, forkedFrom))
                    .equals(DurableStreamProtocol.mediaType(existing.contentType))
                    && (inherits || ttl == existing.ttlSeconds && Objects.equals(expiresAt, existing.expiresAt))
                    && createClosed == existing.isClosed()
                    && Objects.equals(forkedFrom, parentPath)
                    && (forkOffset == null || existing.parent != null
                            && DurableStreamProtocol.position(forkOffset) == existing.forkPosition)
                    && subOffset == existing.forkSubOffset;
            if (!same) {
                refuse(HttpResponseStatus.CONFLICT, "the stream exists with another configuration");
                return;
            }
            FullHttpResponse r = empty(HttpResponseStatus.OK);
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, existing.contentType);
            r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(existing.tail()));
            if (existing.isClosed()) {
                r.headers().set(CLOSED, "true");
            }
            send(r);
            return;
        }
        DurableStream parent = null;
        long forkPosition = 0;
        ByteBuf prefix = null;
        if (forkedFrom != null) {
            parent = streams.parentFor(forkedFrom, now);
            if (parent == null) {
                refuse(HttpResponseStatus.NOT_FOUND, "no stream to fork at " + forkedFrom);
                return;
            }
            if (parent.softDeleted) {
                refuse(HttpResponseStatus.CONFLICT, "the stream to fork was deleted (its forks still read it)");
                return;
            }
            if (contentType != null && !DurableStreamProtocol.mediaType(contentType)
                    .equals(DurableStreamProtocol.mediaType(parent.contentType))) {
                refuse(HttpResponseStatus.CONFLICT, "a fork has its source's content type, " + parent.contentType);
                return;
            }
            contentType = parent.contentType;
            forkPosition = forkOffset == null ? parent.tail() : DurableStreamProtocol.position(forkOffset);
            if (forkPosition > parent.tail()) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Offset is beyond the source stream's end");
                return;
            }
            if (subOffset > 0) {
                prefix = subOffsetPrefix(parent, forkPosition, subOffset);
                if (prefix == null) {
                    return;
                }
            }
            if (ttlText == null && expiresAt == null) {
                ttl = parent.ttlSeconds;
                expiresAt = parent.expiresAt;
                expiresAtMs = parent.expiresAtMs;
            }
        }
        if (contentType == null) {
            contentType = DurableStreamProtocol.DEFAULT_CONTENT_TYPE;
        }
        ByteBuf initial = null;
        if (body.isReadable()) {
            initial = message(DurableStreamProtocol.isJson(contentType), body, true);
            if (initial == null) {
                release(prefix);
                return;
            }
        }
        if (!streams.admit()) {
            release(prefix);
            release(initial);
            overBudget();
            return;
        }
        DurableStream s = new DurableStream(path, contentType, ttl, expiresAt, expiresAtMs, parent, forkPosition,
                prefix == null ? 0 : subOffset, createClosed, now);
        long bytes = (prefix == null ? 0 : prefix.readableBytes()) + (initial == null ? 0 : initial.readableBytes());
        long charged = bytes + (prefix == null ? 0 : DurableStreams.MESSAGE_OVERHEAD_BYTES)
                + (initial == null ? 0 : DurableStreams.MESSAGE_OVERHEAD_BYTES);
        if (bytes > streams.maxStreamBytes()) {
            streams.unadmit();
            release(prefix);
            release(initial);
            refuse(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "a stream holds at most " + streams.maxStreamBytes()
                    + " bytes (--max-run-bytes)");
            return;
        }
        if (!streams.charge(s, charged)) {
            streams.unadmit();
            release(prefix);
            release(initial);
            overBudget();
            return;
        }
        if (parent != null && !streams.holdForFork(parent)) {
            streams.uncharge(s, charged);
            streams.unadmit();
            release(prefix);
            release(initial);
            refuse(HttpResponseStatus.NOT_FOUND, "no stream to fork at " + forkedFrom);
            return;
        }
        if (prefix != null) {
            s.append(prefix);
        }
        if (initial != null) {
            s.append(initial);
        }
        if (createClosed) {
            s.close();
        }
        streams.put(s);
        settings.metrics().durableBytesHeld.add(bytes);
        FullHttpResponse r = empty(HttpResponseStatus.CREATED);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.tail()));
        String host = request.headers().get(HttpHeaderNames.HOST);
        r.headers().set(HttpHeaderNames.LOCATION, (host == null ? "" : "http://" + host) + request.uri());
        if (createClosed) {
            r.headers().set(CLOSED, "true");
        }
        send(r);
    }

    /** The part of the source's first message past the fork point that a sub-offset fork starts with. */
    private ByteBuf subOffsetPrefix(DurableStream parent, long forkPosition, long subOffset) {
        long[] end = new long[1];
        ByteBuf first = parent.firstAfter(forkPosition, end);
        if (first == null) {
            refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Sub-Offset: no message past the fork offset");
            return null;
        }
        if (!parent.json) {
            if (subOffset > first.readableBytes()) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Sub-Offset is past the message's end");
                return null;
            }
            return copy(first.duplicate().writerIndex(first.readerIndex() + (int) subOffset));
        }
        byte[] whole = new byte[first.readableBytes() + 2];
        whole[0] = '[';
        first.getBytes(first.readerIndex(), whole, 1, first.readableBytes());
        whole[whole.length - 1] = ']';
        List<byte[]> values = DurableStreamProtocol.jsonValues(whole);
        if (values == null || subOffset > values.size()) {
            refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Sub-Offset is past the message's values");
            return null;
        }
        return joined(values.subList(0, (int) subOffset));
    }

    // ---- append and close -----------------------------------------------------------------------------------

    private void append(ByteBuf body) {
        HttpHeaders h = request.headers();
        long now = System.currentTimeMillis();
        DurableStream s = streams.get(path, now);
        if (s == null) {
            refuse(HttpResponseStatus.NOT_FOUND, "no stream at " + path);
            return;
        }
        if (s.softDeleted) {
            refuse(HttpResponseStatus.GONE, "the stream was deleted");
            return;
        }
        boolean close = "true".equals(h.get(CLOSED));
        String producerId = h.get(DurableStreamProtocol.PRODUCER_ID);
        String epochText = h.get(DurableStreamProtocol.PRODUCER_EPOCH);
        String seqText = h.get(DurableStreamProtocol.PRODUCER_SEQ);
        boolean anyProducer = producerId != null || epochText != null || seqText != null;
        boolean producer = producerId != null && epochText != null && seqText != null;
        if (anyProducer && !producer) {
            refuse(HttpResponseStatus.BAD_REQUEST, "Producer-Id, Producer-Epoch and Producer-Seq go together");
            return;
        }
        long epoch = 0;
        long seq = 0;
        if (producer) {
            epoch = DurableStreamProtocol.producerNumber(epochText.trim());
            seq = DurableStreamProtocol.producerNumber(seqText.trim());
            if (producerId.isEmpty() || epoch < 0 || seq < 0) {
                refuse(HttpResponseStatus.BAD_REQUEST, "Producer-Id must not be empty; Producer-Epoch and "
                        + "Producer-Seq must be non-negative integers");
                return;
            }
        }
        s.lastAccessMs = now;
        if (!body.isReadable() && !close) {
            refuse(HttpResponseStatus.BAD_REQUEST, "an append needs a body (or Stream-Closed: true to close)");
            return;
        }
        if (s.isClosed()) {
            if (producer && producerId.equals(s.closedById) && epoch == s.closedByEpoch && seq == s.closedBySeq) {
                FullHttpResponse r = empty(HttpResponseStatus.NO_CONTENT);
                r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.tail()));
                r.headers().set(CLOSED, "true");
                producerHeaders(r, epoch, seq);
                send(r);
                return;
            }
            if (!body.isReadable() && !producer) {
                FullHttpResponse r = empty(HttpResponseStatus.NO_CONTENT);
                r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.tail()));
                r.headers().set(CLOSED, "true");
                send(r);
                return;
            }
            FullHttpResponse r = response(HttpResponseStatus.CONFLICT, "the stream is closed");
            r.headers().set(CLOSED, "true");
            r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.tail()));
            send(r);
            return;
        }
        if (body.isReadable()) {
            String type = h.get(HttpHeaderNames.CONTENT_TYPE);
            if (type == null || type.isBlank()) {
                refuse(HttpResponseStatus.BAD_REQUEST, "an append needs a Content-Type");
                return;
            }
            if (!DurableStreamProtocol.mediaType(type).equals(DurableStreamProtocol.mediaType(s.contentType))) {
                refuse(HttpResponseStatus.CONFLICT, "the stream's content type is " + s.contentType);
                return;
            }
        }
        DurableStream.Producer state = null;
        if (producer) {
            state = s.producers.get(producerId);
            if (state != null && epoch < state.epoch) {
                FullHttpResponse r = response(HttpResponseStatus.FORBIDDEN, "stale producer epoch");
                r.headers().set(DurableStreamProtocol.PRODUCER_EPOCH, Long.toString(state.epoch));
                send(r);
                return;
            }
            boolean fresh = state == null || epoch > state.epoch;
            if (fresh && seq != 0) {
                if (state == null) {
                    sequenceGap(0, seq);
                } else {
                    refuse(HttpResponseStatus.BAD_REQUEST, "a new producer epoch starts at Producer-Seq 0");
                }
                return;
            }
            if (!fresh && seq <= state.lastSeq) {
                FullHttpResponse r = empty(HttpResponseStatus.NO_CONTENT);
                producerHeaders(r, epoch, state.lastSeq);
                send(r);
                return;
            }
            if (!fresh && seq != state.lastSeq + 1) {
                sequenceGap(state.lastSeq + 1, seq);
                return;
            }
        }
        String streamSeq = h.get(DurableStreamProtocol.SEQ);
        if (streamSeq != null && s.lastSeq != null && streamSeq.compareTo(s.lastSeq) <= 0) {
            refuse(HttpResponseStatus.CONFLICT, "Stream-Seq " + streamSeq + " is not after " + s.lastSeq);
            return;
        }
        ByteBuf message = null;
        if (body.isReadable()) {
            message = message(s.json, body, false);
            if (message == null) {
                return;
            }
            long bytes = message.readableBytes();
            if (s.chargedBytes + bytes > streams.maxStreamBytes()) {
                message.release();
                refuse(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "a stream holds at most "
                        + streams.maxStreamBytes() + " bytes (--max-run-bytes)");
                return;
            }
            if (!streams.charge(s, bytes + DurableStreams.MESSAGE_OVERHEAD_BYTES)) {
                message.release();
                overBudget();
                return;
            }
            s.append(message);
            settings.metrics().durableAppends.increment();
            settings.metrics().durableBytesIn.add(bytes);
            settings.metrics().durableBytesHeld.add(bytes);
        }
        if (producer) {
            if (state == null) {
                if (s.producers.size() >= DurableStreams.MAX_PRODUCERS) {
                    s.forgetOldestProducer();
                }
                state = new DurableStream.Producer();
                s.producers.put(producerId, state);
            }
            state.epoch = epoch;
            state.lastSeq = seq;
            state.updatedMs = now;
        }
        if (streamSeq != null) {
            s.lastSeq = streamSeq;
        }
        if (close) {
            s.close();
            if (producer) {
                s.closedById = producerId;
                s.closedByEpoch = epoch;
                s.closedBySeq = seq;
            }
        }
        s.wakeWaiters();
        FullHttpResponse r = empty(producer && message != null ? HttpResponseStatus.OK
                : HttpResponseStatus.NO_CONTENT);
        r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.tail()));
        if (producer) {
            producerHeaders(r, epoch, seq);
        }
        if (close) {
            r.headers().set(CLOSED, "true");
        }
        send(r);
    }

    private void sequenceGap(long expected, long received) {
        FullHttpResponse r = response(HttpResponseStatus.CONFLICT, "producer sequence gap");
        r.headers().set(DurableStreamProtocol.PRODUCER_EXPECTED_SEQ, Long.toString(expected));
        r.headers().set(DurableStreamProtocol.PRODUCER_RECEIVED_SEQ, Long.toString(received));
        send(r);
    }

    private static void producerHeaders(FullHttpResponse r, long epoch, long seq) {
        r.headers().set(DurableStreamProtocol.PRODUCER_EPOCH, Long.toString(epoch));
        r.headers().set(DurableStreamProtocol.PRODUCER_SEQ, Long.toString(seq));
    }

    /**
     * The message a body makes: its bytes, or for a JSON stream its values joined by commas (an array's
     * elements; {@code []} makes none, allowed only at creation). Null after refusing a body that is not JSON.
     */
    private ByteBuf message(boolean json, ByteBuf body, boolean creating) {
        if (!json) {
            return copy(body);
        }
        List<byte[]> values = DurableStreamProtocol.jsonValues(ByteBufUtil.getBytes(body));
        if (values == null) {
            refuse(HttpResponseStatus.BAD_REQUEST, "the body is not valid JSON");
            return null;
        }
        if (values.isEmpty()) {
            if (!creating) {
                refuse(HttpResponseStatus.BAD_REQUEST, "an empty JSON array appends nothing");
            }
            return creating ? Unpooled.EMPTY_BUFFER : null;
        }
        return joined(values);
    }

    private ByteBuf joined(List<byte[]> values) {
        int size = values.size() - 1;
        for (byte[] v : values) {
            size += v.length;
        }
        ByteBuf out = ctx.alloc().directBuffer(Math.max(size, 1));
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.writeByte(',');
            }
            out.writeBytes(values.get(i));
        }
        return out;
    }

    private ByteBuf copy(ByteBuf bytes) {
        ByteBuf out = ctx.alloc().directBuffer(bytes.readableBytes());
        out.writeBytes(bytes, bytes.readerIndex(), bytes.readableBytes());
        return out;
    }

    // ---- HEAD and DELETE ------------------------------------------------------------------------------------

    private void head() {
        DurableStream s = streams.get(path, System.currentTimeMillis());
        if (s == null || s.softDeleted) {
            FullHttpResponse r = empty(s == null ? HttpResponseStatus.NOT_FOUND : HttpResponseStatus.GONE);
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            send(r);
            return;
        }
        FullHttpResponse r = empty(HttpResponseStatus.OK);
        String next = DurableStreamProtocol.offset(s.tail());
        r.headers().set(NEXT_OFFSET, next);
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, s.contentType);
        if (s.isClosed()) {
            r.headers().set(CLOSED, "true");
        }
        if (s.ttlSeconds >= 0) {
            r.headers().set(DurableStreamProtocol.TTL, Long.toString(s.ttlSeconds));
        }
        if (s.expiresAt != null) {
            r.headers().set(DurableStreamProtocol.EXPIRES_AT, s.expiresAt);
        }
        r.headers().set(HttpHeaderNames.ETAG, DurableStreamProtocol.etag(path, "-1", next, s.isClosed()));
        send(r);
    }

    private void delete() {
        DurableStream s = streams.get(path, System.currentTimeMillis());
        if (s == null) {
            refuse(HttpResponseStatus.NOT_FOUND, "no stream at " + path);
            return;
        }
        if (s.softDeleted) {
            refuse(HttpResponseStatus.GONE, "the stream was deleted");
            return;
        }
        streams.delete(s);
        send(empty(HttpResponseStatus.NO_CONTENT));
    }

    // ---- reads ----------------------------------------------------------------------------------------------

    private void read(List<String> offsets, String live, String clientCursor) {
        long now = System.currentTimeMillis();
        DurableStream s = streams.get(path, now);
        if (s == null) {
            refuse(HttpResponseStatus.NOT_FOUND, "no stream at " + path);
            return;
        }
        if (s.softDeleted) {
            refuse(HttpResponseStatus.GONE, "the stream was deleted");
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
        List<ByteBuf> parts = new ArrayList<>();
        List<Long> ends = new ArrayList<>();
        s.collect(position, Long.MAX_VALUE, parts, ends, MAX_READ_BYTES);
        long next = ends.isEmpty() ? Math.max(position, s.tail()) : ends.get(ends.size() - 1);
        if (ends.isEmpty() && position < s.tail()) {
            next = s.tail();
        }
        boolean upToDate = next >= s.tail();
        boolean closedHere = upToDate && s.isClosed();
        String nextOffset = DurableStreamProtocol.offset(next);
        String etag = DurableStreamProtocol.etag(path, from, nextOffset, closedHere);
        String ifNoneMatch = request.headers().get(HttpHeaderNames.IF_NONE_MATCH);
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
            content.addComponent(true, parts.get(i).retainedDuplicate());
        }
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
        if (sse) {
            sseKeepAlive(s);
            return;
        }
        send(longPollEmpty(s, true));
    }

    @Override
    public void wake() {
        DurableStream s = waitingOn;
        if (s == null || done) {
            return;
        }
        if (sse) {
            stopWaiting();
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
    public void closed() {
        if (sse && !done) {
            settings.metrics().durableSseReaders.decrement();
        }
        done = true;
        stopWaiting();
        releaseReaderSlot();
        if (sseEnd != null) {
            sseEnd.cancel(false);
        }
    }

    /** Whether the answer is complete (the connection may carry the next request). */
    public boolean isDone() {
        return done;
    }

    // ---- SSE ------------------------------------------------------------------------------------------------

    private ScheduledFuture<?> sseEnd;

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
        decorate(h);
        ctx.write(head);
        settings.metrics().durableSseReaders.increment();
        ssePosition = position;
        sseEnd = ctx.channel().eventLoop().schedule(this::sseExpired, SSE_MAX_MS, TimeUnit.MILLISECONDS);
        ssePump(s);
    }

    /** Writes every message after the reader's position, each with its control event; then waits or ends. */
    private void ssePump(DurableStream s) {
        if (done) {
            return;
        }
        if (s.softDeleted) {
            sseFinish();
            return;
        }
        StringBuilder out = new StringBuilder(256);
        while (true) {
            List<ByteBuf> parts = new ArrayList<>();
            List<Long> ends = new ArrayList<>();
            s.collect(ssePosition, Long.MAX_VALUE, parts, ends, MAX_READ_BYTES);
            if (parts.isEmpty()) {
                break;
            }
            for (int i = 0; i < parts.size(); i++) {
                byte[] bytes = ByteBufUtil.getBytes(parts.get(i));
                String payload = s.json ? "[" + new String(bytes, StandardCharsets.UTF_8) + "]"
                        : DurableStreamProtocol.ssePayload(bytes, sseBase64);
                DurableStreamProtocol.sseEvent(out, "data", payload);
                ssePosition = ends.get(i);
                control(out, s, ssePosition);
            }
            if (out.length() > MAX_READ_BYTES) {
                sseWrite(out);
                out.setLength(0);
            }
        }
        if (ssePosition < s.tail()) {
            ssePosition = s.tail();
        }
        boolean closedAtTail = s.isClosed();
        if (out.isEmpty() || closedAtTail) {
            control(out, s, ssePosition);
        }
        sseWrite(out);
        if (closedAtTail) {
            sseFinish();
            return;
        }
        ctx.flush();
        waitingOn = s;
        s.waiters.add(this);
        timer = ctx.channel().eventLoop().schedule(this::longPollTimedOut, settings.longPollMs(),
                TimeUnit.MILLISECONDS);
    }

    private void control(StringBuilder out, DurableStream s, long position) {
        StringBuilder json = new StringBuilder(96).append("{\"streamNextOffset\":");
        Json.quote(json, DurableStreamProtocol.offset(position));
        boolean atTail = position >= s.tail();
        if (atTail && s.isClosed()) {
            json.append(",\"streamClosed\":true");
        } else {
            json.append(",\"streamCursor\":");
            Json.quote(json, nextCursor());
            if (atTail) {
                json.append(",\"upToDate\":true");
            }
        }
        json.append('}');
        DurableStreamProtocol.sseEvent(out, "control", json);
    }

    private void sseKeepAlive(DurableStream s) {
        StringBuilder out = new StringBuilder(128);
        control(out, s, ssePosition);
        sseWrite(out);
        ctx.flush();
        waitingOn = s;
        s.waiters.add(this);
        timer = ctx.channel().eventLoop().schedule(this::longPollTimedOut, settings.longPollMs(),
                TimeUnit.MILLISECONDS);
    }

    private void sseWrite(StringBuilder out) {
        if (out.isEmpty()) {
            return;
        }
        ByteBuf bytes = ByteBufUtil.writeUtf8(ctx.alloc(), out);
        settings.metrics().durableBytesOut.add(bytes.readableBytes());
        ctx.write(new DefaultHttpContent(bytes));
    }

    private void sseExpired() {
        if (!done) {
            stopWaiting();
            sseFinish();
        }
    }

    private void sseFinish() {
        done = true;
        stopWaiting();
        releaseReaderSlot();
        if (sseEnd != null) {
            sseEnd.cancel(false);
        }
        settings.metrics().durableSseReaders.decrement();
        ChannelFuture f = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        if (!keepAlive) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    // ---- replies --------------------------------------------------------------------------------------------

    private void overBudget() {
        FullHttpResponse r = response(HttpResponseStatus.SERVICE_UNAVAILABLE,
                "the server's memory budget is full; retry later");
        r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        send(r);
    }

    private void refuse(HttpResponseStatus status, String message) {
        send(response(status, message));
    }

    private FullHttpResponse response(HttpResponseStatus status, String message) {
        return response(status, "text/plain; charset=utf-8", message);
    }

    private FullHttpResponse response(HttpResponseStatus status, String contentType, String body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        return r;
    }

    private static FullHttpResponse empty(HttpResponseStatus status) {
        return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
    }

    private void decorate(HttpHeaders h) {
        DurableStreamProtocol.securityHeaders(h);
        if (settings.open()) {
            h.set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");
            h.set(HttpHeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, DurableStreamProtocol.CORS_EXPOSE_HEADERS);
        } else if (settings.cors().allowedOrigin(request) != null) {
            settings.cors().apply(request, h);
            h.set(HttpHeaderNames.ACCESS_CONTROL_EXPOSE_HEADERS, DurableStreamProtocol.CORS_EXPOSE_HEADERS);
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
        HttpHeaders h = r.headers();
        decorate(h);
        int status = r.status().code();
        if (status != 204 && status != 304) {
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
        }
        if (request.method().equals(HttpMethod.HEAD)) {
            r.content().clear();
        }
        settings.replies().send(ctx, null, r, keepAlive);
    }

    private static void release(ByteBuf b) {
        if (b != null) {
            b.release();
        }
    }

    private static String orDefault(String contentType, String existing, String forkedFrom) {
        if (contentType != null) {
            return contentType;
        }
        return forkedFrom != null ? existing : DurableStreamProtocol.DEFAULT_CONTENT_TYPE;
    }

    /** An RFC 3339 / ISO 8601 timestamp (or an HTTP date) in epoch milliseconds, or Long.MIN_VALUE. */
    static long timestampMs(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            // try the next form
        }
        try {
            return Instant.parse(text).toEpochMilli();
        } catch (DateTimeParseException e) {
            // try the next form
        }
        try {
            return ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            return Long.MIN_VALUE;
        }
    }
}
