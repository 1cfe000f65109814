package io.iqstream.server.stream;

import static io.iqstream.server.stream.DurableStreamProtocol.CLOSED;
import static io.iqstream.server.stream.DurableStreamProtocol.NEXT_OFFSET;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.ProducerLedger;
import io.iqstream.server.wire.CorsPolicy;
import io.iqstream.server.wire.HttpReplies;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Serves one Durable Streams request, whole body in hand, on the stream's owner worker: create (PUT, forks
 * included), append and close (POST, with Stream-Seq and idempotent producers), HEAD and DELETE; a read (GET)
 * goes to {@link LiveRead}.
 *
 * <p>One per request; confined to the owner worker's loop.
 */
public final class StreamExchange implements StreamAnswer {
    /** What the HTTP layer hands over with the request. */
    public record Settings(DurableStreams streams, Metrics metrics, CorsPolicy cors, HttpReplies replies,
            boolean open, long longPollMs, long sseLifetimeMs, long maxAppendBytes) {}

    private final Settings settings;
    private final DurableStreams streams;
    private final ChannelHandlerContext ctx;
    private final HttpRequest request;
    private final String path;
    private final boolean keepAlive;

    private final StreamReply reply;
    /** The stream this request found or made: its answer waits for the stream's records queued before it. */
    private DurableStream stream;
    /** Whether this request wrote a record: if the stream's file failed meanwhile, its answer says so instead. */
    private boolean wrote;
    /** Whether the answer is written (it may wait for the stream's records to be durable). */
    private boolean answered = true;
    /** Told once the answer awaited from the disk is written: the connection may go on to a pipelined request. */
    private java.util.function.Consumer<Boolean> whenDone;

    private StreamExchange(StreamReply reply) {
        this.reply = reply;
        this.settings = reply.settings;
        this.streams = reply.streams;
        this.ctx = reply.ctx;
        this.request = reply.request;
        this.path = reply.path;
        this.keepAlive = reply.keepAlive;
    }

    /**
     * Serves the request; returns the answer when it is not written yet (a live read goes on, or a write waits for
     * the disk; the connection must tell it when it closes), else null (answered). {@code body} is released here.
     *
     * @param path the stream's path as the protocol names it ({@code /v1/stream/...}, decoded)
     * @param offsets every {@code offset} parameter given; {@code live}, {@code cursor}: the parameters or null
     * @param sourceReadable false when the request forks a stream its caller may not read: the source is then
     *     answered as absent (404), exactly as one that does not exist, so a fork tells nothing of it
     */
    public static StreamAnswer serve(Settings settings, ChannelHandlerContext ctx, HttpRequest request, String path,
            ByteBuf body, List<String> offsets, String live, String cursor, boolean keepAlive,
            boolean sourceReadable) {
        String damage = settings.streams().damageOf(path);
        if (damage != null) {
            try {
                new StreamReply(settings, ctx, request, path, keepAlive).damaged(damage);
            } finally {
                body.release();
            }
            return null;
        }
        DurableStream cold = settings.streams().coldFor(path,
                request.method().equals(HttpMethod.PUT) && sourceReadable
                        ? request.headers().get(DurableStreamProtocol.FORKED_FROM) : null);
        // a catch-up or a long-poll of a cold stream is read from its file, a page at a time (LiveRead, ColdRead),
        // a long-poll at its tail waits without its bytes, and a HEAD needs none of them: none of these loads it
        boolean fromFile = request.method().equals(HttpMethod.GET) && (live == null || "long-poll".equals(live))
                || request.method().equals(HttpMethod.HEAD);
        if (cold != null && !fromFile) {
            try {
                return ColdLoad.start(cold, settings, ctx, request, path, body, offsets, live, cursor, keepAlive,
                        sourceReadable);
            } finally {
                body.release();
            }
        }
        StreamExchange x = new StreamExchange(new StreamReply(settings, ctx, request, path, keepAlive));
        try {
            HttpMethod m = request.method();
            if (m.equals(HttpMethod.GET)) {
                return LiveRead.start(x.reply, offsets, live, cursor);
            } else if (m.equals(HttpMethod.PUT)) {
                x.create(body, sourceReadable);
            } else if (m.equals(HttpMethod.POST)) {
                x.append(body);
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
        return x.answered ? null : x;
    }

    @Override
    public boolean isDone() {
        return answered;
    }

    @Override
    public void closed() {
        // the write goes on to the disk; its answer finds the connection closed
    }

    @Override
    public boolean awaitsStorage() {
        return !answered;
    }

    @Override
    public void whenDone(java.util.function.Consumer<Boolean> then) {
        if (answered) {
            then.accept(keepAlive);
        } else {
            whenDone = then;
        }
    }

    // ---- create ---------------------------------------------------------------------------------------------

    private void create(ByteBuf body, boolean sourceReadable) {
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
        stream = existing;
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
                    && createClosed == existing.writesClosed()
                    && Objects.equals(forkedFrom, parentPath)
                    && (forkOffset == null || existing.parent != null
                            && DurableStreamProtocol.position(forkOffset) == existing.log.forkPosition())
                    && subOffset == existing.forkSubOffset;
            if (!same) {
                refuse(HttpResponseStatus.CONFLICT, "the stream exists with another configuration");
                return;
            }
            FullHttpResponse r = empty(HttpResponseStatus.OK);
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, existing.contentType);
            r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(existing.appendedTail()));
            if (existing.writesClosed()) {
                r.headers().set(CLOSED, "true");
            }
            send(r);
            return;
        }
        DurableStream parent = null;
        long forkPosition = 0;
        ByteBuf prefix = null;
        if (forkedFrom != null) {
            parent = sourceReadable ? streams.parentFor(forkedFrom, now) : null;
            String sourceDamage = parent == null && sourceReadable ? streams.damageOf(forkedFrom) : null;
            if (sourceDamage != null) {
                reply.damaged(sourceDamage); // the source's file is damaged: said so, never "no stream"
                return;
            }
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
            // held before its log is read: a source freed on its own worker meanwhile is never read (its
            // segments released), and from here every refusal gives the hold back; a held log is the source's
            // for as long as the hold lasts (it goes cold only unheld)
            if (!streams.holdForFork(parent)) {
                if (parent.cold) {
                    // it went cold since this request looked (a load was due): the next try loads it
                    FullHttpResponse r = response(HttpResponseStatus.SERVICE_UNAVAILABLE, "the stream to fork is "
                            + "being loaded from its file; retry");
                    r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
                    send(r);
                    return;
                }
                refuse(HttpResponseStatus.NOT_FOUND, "no stream to fork at " + forkedFrom);
                return;
            }
            forkPosition = forkOffset == null ? parent.tail() : DurableStreamProtocol.position(forkOffset);
            if (forkPosition > parent.tail()) {
                letGo(parent);
                refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Offset is beyond the source stream's end");
                return;
            }
            if (subOffset > 0) {
                prefix = subOffsetPrefix(parent, forkPosition, subOffset);
                if (prefix == null) {
                    letGo(parent);
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
                letGo(parent);
                return;
            }
        }
        // its bookkeeping first: the strings a client chose (the path up to the request line's 8 KiB) are heap
        long bookkeeping = DurableStreams.bookkeepingBytes(path, contentType, expiresAt);
        if (streams.diskFull()) {
            release(prefix);
            release(initial);
            letGo(parent);
            reply.diskFull();
            return;
        }
        if (!streams.storeHasRoom(path) || !streams.admit(bookkeeping)) {
            release(prefix);
            release(initial);
            letGo(parent);
            overBudget();
            return;
        }
        DurableStream s = new DurableStream(path, contentType, ttl, expiresAt, expiresAtMs, parent, forkPosition,
                prefix == null ? 0 : subOffset, createClosed, now, ctx.alloc());
        s.heapChargedBytes = bookkeeping;
        long bytes = (prefix == null ? 0 : prefix.readableBytes()) + (initial == null ? 0 : initial.readableBytes());
        if (bytes > streams.maxStreamBytes()) {
            streams.unadmit(bookkeeping);
            release(prefix);
            release(initial);
            letGo(parent);
            refuse(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "a stream holds at most " + streams.maxStreamBytes()
                    + " bytes (--max-run-bytes)");
            return;
        }
        boolean stored = (prefix == null || store(s, prefix)) && (initial == null || store(s, initial));
        byte[] prefixBytes = prefix != null && streams.onDisk() ? ByteBufUtil.getBytes(prefix) : null;
        byte[] initialBytes = initial != null && streams.onDisk() ? ByteBufUtil.getBytes(initial) : null;
        release(prefix);
        release(initial);
        if (!stored) {
            unmake(s);
            overBudget();
            return;
        }
        streams.put(s);
        settings.metrics().durableBytesHeld.add(bytes);
        stream = s;
        wrote = true;
        if (createClosed) {
            s.closeForWrites();
        }
        // the creation and its first messages are one record each; readers see them once the last is durable
        int messages = s.log.appendedCount();
        List<byte[]> records = new ArrayList<>(3);
        if (streams.onDisk()) {
            records.add(StreamRecords.create(new StreamRecords.Create(path, contentType, ttl, expiresAt, expiresAtMs,
                    parent == null ? null : parent.path, forkPosition, s.forkSubOffset, createClosed)));
            if (prefixBytes != null) {
                records.add(appendRecord(now, prefixBytes, false, null, 0, 0, null));
            }
            if (initialBytes != null) {
                records.add(appendRecord(now, initialBytes, false, null, 0, 0, null));
            }
        }
        streams.persistAll(s, records, () -> {
            s.log.commit(messages);
            if (createClosed) {
                s.close();
            }
            s.wakeWaiters();
        });
        // validated as set: Location holds the request's target
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CREATED,
                Unpooled.EMPTY_BUFFER);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.appendedTail()));
        String host = request.headers().get(HttpHeaderNames.HOST);
        r.headers().set(HttpHeaderNames.LOCATION, (host == null ? "" : "http://" + host) + request.uri());
        if (createClosed) {
            r.headers().set(CLOSED, "true");
        }
        send(r);
    }

    /** Stores {@code message} (the caller keeps its buffer) as {@code s}'s next, charged; false over budget. */
    private boolean store(DurableStream s, ByteBuf message) {
        if (!streams.charge(s, s.log.chargeFor(message.readableBytes()))) {
            return false;
        }
        s.log.append(message);
        return true;
    }

    /** A fork's create refused after its source was held: the hold given back ({@code parent} null: no fork). */
    private void letGo(DurableStream parent) {
        if (parent != null) {
            streams.releaseFork(parent);
        }
    }

    /** A stream made by a create that is refused after all: its segments, charge and hold on its source given back. */
    private void unmake(DurableStream s) {
        s.log.release();
        streams.uncharge(s, s.chargedBytes);
        streams.unchargeHeap(s, s.heapChargedBytes);
        letGo(s.parent);
    }

    /** The part of the source's first message past the fork point that a sub-offset fork starts with. */
    private ByteBuf subOffsetPrefix(DurableStream parent, long forkPosition, long subOffset) {
        long[] end = new long[1];
        ByteBuf first = parent.log.firstAfter(forkPosition, end);
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
        int[] ranges = DurableStreamProtocol.jsonValueRanges(whole, whole.length);
        if (ranges == null || subOffset > ranges.length / 2) {
            refuse(HttpResponseStatus.BAD_REQUEST, "Stream-Fork-Sub-Offset is past the message's values");
            return null;
        }
        return joined(whole, Arrays.copyOf(ranges, (int) subOffset * 2));
    }

    // ---- append and close -----------------------------------------------------------------------------------

    private void append(ByteBuf body) {
        HttpHeaders h = request.headers();
        long now = System.currentTimeMillis();
        DurableStream s = reply.existing(now);
        if (s == null) {
            return;
        }
        stream = s;
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
        if (s.writesClosed()) {
            if (producer && s.producers.isClosingAppend(producerId, epoch, seq)) {
                FullHttpResponse r = empty(HttpResponseStatus.NO_CONTENT);
                r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.appendedTail()));
                r.headers().set(CLOSED, "true");
                producerHeaders(r, epoch, seq);
                send(r);
                return;
            }
            if (!body.isReadable() && !producer) {
                FullHttpResponse r = empty(HttpResponseStatus.NO_CONTENT);
                r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.appendedTail()));
                r.headers().set(CLOSED, "true");
                send(r);
                return;
            }
            FullHttpResponse r = response(HttpResponseStatus.CONFLICT, "the stream is closed");
            r.headers().set(CLOSED, "true");
            r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.appendedTail()));
            send(r);
            return;
        }
        if (s.storageFailure != null) {
            reply.storageFailed(s.storageFailure);
            return;
        }
        if (!streams.storeHasRoom(path)) {
            overBudget();
            return;
        }
        if (body.isReadable() && streams.diskFull()) {
            reply.diskFull(); // a close-only append still goes: its record is a few bytes, and it ends the stream
            return;
        }
        if (body.isReadable()) {
            String type = h.get(HttpHeaderNames.CONTENT_TYPE);
            if (type == null || type.isBlank()) {
                refuse(HttpResponseStatus.BAD_REQUEST, "an append needs a Content-Type");
                return;
            }
            if (!type.equals(s.contentType)
                    && !DurableStreamProtocol.mediaType(type).equals(DurableStreamProtocol.mediaType(s.contentType))) {
                refuse(HttpResponseStatus.CONFLICT, "the stream's content type is " + s.contentType);
                return;
            }
        }
        if (producer && !producerMayAppend(s.producers, producerId, epoch, seq, now)) {
            return;
        }
        String streamSeq = h.get(DurableStreamProtocol.SEQ);
        if (streamSeq != null && s.lastSeq != null && streamSeq.compareTo(s.lastSeq) <= 0) {
            // the reference server's words first (the protocol's client conformance suite looks for them), then ours
            refuse(HttpResponseStatus.CONFLICT, "Sequence conflict: Stream-Seq " + streamSeq + " is not after "
                    + s.lastSeq);
            return;
        }
        // a new producer and a new Stream-Seq are heap, charged before the append is stored: a stranger picks the
        // id and the seq, and their length (up to the request head's limit); a refusal from here on gives them back
        long producerBytes = producer && !s.producers.knows(producerId) ? ProducerLedger.bytesFor(producerId) : 0;
        long heapBytes = producerBytes + DurableStreams.seqBytes(streamSeq);
        if (!streams.chargeHeap(s, heapBytes)) {
            overBudget();
            return;
        }
        ByteBuf message = null;
        byte[] data = null;
        if (body.isReadable()) {
            message = message(s.json, body, false);
            if (message == null) {
                streams.unchargeHeap(s, heapBytes);
                return;
            }
            int bytes = message.readableBytes();
            if (s.log.ownBytes() + bytes > streams.maxStreamBytes()) {
                message.release();
                streams.unchargeHeap(s, heapBytes);
                refuse(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "a stream holds at most "
                        + streams.maxStreamBytes() + " bytes (--max-run-bytes)");
                return;
            }
            boolean stored = store(s, message);
            data = stored && streams.onDisk() ? ByteBufUtil.getBytes(message) : null;
            message.release();
            if (!stored) {
                streams.unchargeHeap(s, heapBytes);
                overBudget();
                return;
            }
            settings.metrics().durableAppends.increment();
            settings.metrics().durableBytesIn.add(bytes);
            settings.metrics().durableBytesHeld.add(bytes);
        }
        if (producer) {
            // the one forgotten past MAX_PRODUCERS gives its bytes back (the new one's were charged above)
            long change = s.producers.accept(producerId, epoch, seq, now);
            if (change < producerBytes) {
                streams.unchargeHeap(s, producerBytes - change);
            }
        }
        if (streamSeq != null) {
            streams.unchargeHeap(s, DurableStreams.seqBytes(s.lastSeq));
            s.lastSeq = streamSeq;
        }
        if (close) {
            s.closeForWrites();
            if (producer) {
                s.producers.recordClosingAppend(producerId, epoch, seq);
            }
        }
        // the message, the closure and the producer's and Stream-Seq's state in one record: readers see the message
        // and the closure once it is durable, and so does the answer
        int messages = s.log.appendedCount();
        wrote = true;
        streams.persist(s, streams.onDisk()
                ? appendRecord(now, data, close, producer ? producerId : null, epoch, seq, streamSeq) : null,
                () -> {
                    s.log.commit(messages);
                    if (close) {
                        s.close();
                    }
                    s.wakeWaiters();
                });
        FullHttpResponse r = empty(producer && message != null ? HttpResponseStatus.OK
                : HttpResponseStatus.NO_CONTENT);
        r.headers().set(NEXT_OFFSET, DurableStreamProtocol.offset(s.appendedTail()));
        if (producer) {
            producerHeaders(r, epoch, seq);
        }
        if (close) {
            r.headers().set(CLOSED, "true");
        }
        send(r);
    }

    /**
     * Whether the producer append ({@code id}, {@code epoch}, {@code seq}) is one to store, by the ledger's verdict;
     * when not, answers it: 403 a stale epoch, 400 a new epoch not at 0, 409 a gap, 204 a duplicate, 429 a new
     * producer while the stream remembers {@link ProducerLedger#MAX_PRODUCERS} active ones.
     */
    private boolean producerMayAppend(ProducerLedger producers, String id, long epoch, long seq, long nowMs) {
        FullHttpResponse r = switch (producers.check(id, epoch, seq, nowMs)) {
            case APPEND -> null;
            case STALE_EPOCH -> {
                FullHttpResponse stale = response(HttpResponseStatus.FORBIDDEN, "stale producer epoch");
                stale.headers().set(DurableStreamProtocol.PRODUCER_EPOCH, Long.toString(producers.epoch(id)));
                yield stale;
            }
            case NEW_EPOCH_NOT_AT_ZERO -> response(HttpResponseStatus.BAD_REQUEST,
                    "a new producer epoch starts at Producer-Seq 0");
            case SEQUENCE_GAP -> {
                FullHttpResponse gap = response(HttpResponseStatus.CONFLICT, "producer sequence gap");
                gap.headers().set(DurableStreamProtocol.PRODUCER_EXPECTED_SEQ,
                        Long.toString(producers.expectedSeq(id)));
                gap.headers().set(DurableStreamProtocol.PRODUCER_RECEIVED_SEQ, Long.toString(seq));
                yield gap;
            }
            case TOO_MANY_PRODUCERS -> {
                FullHttpResponse full = response(HttpResponseStatus.TOO_MANY_REQUESTS, "the stream remembers "
                        + ProducerLedger.MAX_PRODUCERS + " producers, each active within a week: a new Producer-Id is "
                        + "taken once one of them has been silent that long");
                full.headers().set(HttpHeaderNames.RETRY_AFTER, "3600");
                yield full;
            }
            case DUPLICATE -> {
                FullHttpResponse duplicate = empty(HttpResponseStatus.NO_CONTENT);
                producerHeaders(duplicate, epoch, producers.lastSeq(id));
                yield duplicate;
            }
        };
        if (r == null) {
            return true;
        }
        send(r);
        return false;
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
            return body.retainedSlice();
        }
        byte[] bytes = ByteBufUtil.getBytes(body);
        int[] ranges = DurableStreamProtocol.jsonValueRanges(bytes, bytes.length);
        if (ranges == null) {
            refuse(HttpResponseStatus.BAD_REQUEST, "the body is not valid JSON");
            return null;
        }
        if (ranges.length == 0) {
            if (!creating) {
                refuse(HttpResponseStatus.BAD_REQUEST, "an empty JSON array appends nothing");
            }
            return creating ? Unpooled.EMPTY_BUFFER : null;
        }
        return joined(bytes, ranges);
    }

    /**
     * The values at {@code ranges} of {@code bytes}, joined by commas, in a buffer of exactly their size: a heap
     * array of its own (one value: {@code bytes} itself), garbage once appended, not a pooled heap buffer, whose
     * arena would keep a chunk for a copy this short-lived.
     */
    private static ByteBuf joined(byte[] bytes, int[] ranges) {
        if (ranges.length == 2) {
            return Unpooled.wrappedBuffer(bytes, ranges[0], ranges[1] - ranges[0]);
        }
        int size = ranges.length / 2 - 1;
        for (int i = 0; i < ranges.length; i += 2) {
            size += ranges[i + 1] - ranges[i];
        }
        byte[] out = new byte[size];
        int at = 0;
        for (int i = 0; i < ranges.length; i += 2) {
            if (i > 0) {
                out[at++] = ',';
            }
            int length = ranges[i + 1] - ranges[i];
            System.arraycopy(bytes, ranges[i], out, at, length);
            at += length;
        }
        return Unpooled.wrappedBuffer(out);
    }

    private static ByteBuf copy(ByteBuf bytes) {
        return Unpooled.wrappedBuffer(ByteBufUtil.getBytes(bytes));
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
        DurableStream s = reply.existing(System.currentTimeMillis());
        if (s == null) {
            return;
        }
        stream = s;
        streams.delete(s);
        send(empty(HttpResponseStatus.NO_CONTENT));
    }

    private void overBudget() {
        reply.overBudget();
    }

    private void refuse(HttpResponseStatus status, String message) {
        reply.refuse(status, message);
    }

    private FullHttpResponse response(HttpResponseStatus status, String message) {
        return reply.response(status, message);
    }

    private static FullHttpResponse empty(HttpResponseStatus status) {
        return StreamReply.empty(status);
    }

    /**
     * Answers once every record of the stream queued before now is durable (at once when none is, or in memory
     * mode); a request whose own record failed meanwhile is answered that the storage failed.
     */
    private void send(FullHttpResponse r) {
        DurableStream s = stream;
        if (s == null || s.pendingWrites == 0) {
            reply.send(r); // nothing of the stream's on its way to the disk (always so in memory mode)
            return;
        }
        boolean mine = wrote;
        answered = false;
        streams.afterWrites(s, () -> {
            answered = true;
            if (mine && s.storageFailure != null) {
                r.release();
                reply.storageFailed(s.storageFailure);
            } else {
                reply.send(r);
            }
            java.util.function.Consumer<Boolean> then = whenDone;
            whenDone = null;
            if (then != null) {
                then.accept(keepAlive);
            }
        });
    }

    /** An append's record (data null: none), copied out of the request for the storage thread. */
    private static byte[] appendRecord(long nowMs, byte[] data, boolean close, String producerId, long epoch,
            long seq, String streamSeq) {
        return StreamRecords.append(new StreamRecords.Append(nowMs, data, close, producerId, epoch, seq, streamSeq));
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
        } catch (ArithmeticException e) {
            return Long.MIN_VALUE; // a year that milliseconds since 1970 cannot hold (RFC 3339 years have 4 digits)
        } catch (DateTimeParseException e) {
            // try the next form
        }
        try {
            return Instant.parse(text).toEpochMilli();
        } catch (ArithmeticException e) {
            return Long.MIN_VALUE;
        } catch (DateTimeParseException e) {
            // try the next form
        }
        try {
            return ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
        } catch (ArithmeticException | DateTimeParseException e) {
            return Long.MIN_VALUE;
        }
    }
}
