package io.iqstream.server.ingest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.async.ByteArrayFeeder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;

/**
 * {@code application/json}: one event object, or an array of them. Parsed incrementally with Jackson's
 * non-blocking parser, so each element of a streamed array is appended as soon as its closing brace arrives.
 * Bytes of the element being read are kept (capped by the event size); finished elements are dropped.
 */
final class JsonBodySplitter implements EventSplitter {
    private static final JsonFactory FACTORY = new JsonFactory();

    private final int maxEventBytes;
    private final JsonParser parser;
    private final ByteBuf pending = Unpooled.buffer(1024);
    private long pendingBaseOffset;
    private byte[] scratch = new byte[4096];
    private int depth;
    private boolean array;
    private boolean done;
    private long elementStart = -1;

    JsonBodySplitter(int maxEventBytes) {
        this.maxEventBytes = maxEventBytes;
        try {
            this.parser = FACTORY.createNonBlockingByteArrayParser();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        int n = chunk.readableBytes();
        if (n == 0) {
            return true;
        }
        if (scratch.length < n) {
            scratch = new byte[Math.max(n, scratch.length * 2)];
        }
        chunk.getBytes(chunk.readerIndex(), scratch, 0, n);
        pending.writeBytes(scratch, 0, n);
        try {
            ((ByteArrayFeeder) parser.getNonBlockingInputFeeder()).feedInput(scratch, 0, n);
            return drain(sink);
        } catch (IOException e) {
            sink.onFramingError(messageOf(e));
            return false;
        }
    }

    private boolean drain(EventSink sink) throws IOException {
        JsonToken t;
        while ((t = parser.nextToken()) != null && t != JsonToken.NOT_AVAILABLE) {
            if (done) {
                sink.onFramingError("unexpected content after the end of the JSON body");
                return false;
            }
            long tokenOffset = parser.currentTokenLocation().getByteOffset();
            switch (t) {
                case START_OBJECT -> {
                    if (depth == 0 || (array && depth == 1)) {
                        elementStart = braceAtOrBefore(tokenOffset);
                    }
                    depth++;
                }
                case START_ARRAY -> {
                    if (depth == 0) {
                        array = true;
                    }
                    depth++;
                }
                case END_OBJECT, END_ARRAY -> {
                    depth--;
                    if (t == JsonToken.END_OBJECT && (depth == 0 || (array && depth == 1))) {
                        if (!emit(elementStart, tokenOffset + 1, sink)) {
                            return false;
                        }
                        elementStart = -1;
                    }
                    if (depth == 0) {
                        done = true;
                    }
                }
                default -> {
                    if (depth == 0 || (array && depth == 1)) {
                        sink.onFramingError(array ? "array element is not an event object"
                                : "body is neither an event object nor an array of them");
                        return false;
                    }
                }
            }
        }
        long holdFrom = elementStart >= 0 ? elementStart : parser.currentLocation().getByteOffset();
        if (elementStart >= 0 && pendingBaseOffset + pending.writerIndex() - elementStart > maxEventBytes) {
            sink.onOversizeEvent();
            return false;
        }
        discardBefore(holdFrom);
        return true;
    }

    /** Jackson's non-blocking parser may report a start-object token just past its brace: find the brace. */
    private long braceAtOrBefore(long offset) {
        long at = offset;
        while (at > pendingBaseOffset && (at - pendingBaseOffset >= pending.writerIndex()
                || pending.getByte((int) (at - pendingBaseOffset)) != '{')) {
            at--;
        }
        return at;
    }

    private boolean emit(long start, long end, EventSink sink) {
        if (end - start > maxEventBytes) {
            sink.onOversizeEvent();
            return false;
        }
        int from = (int) (start - pendingBaseOffset);
        return sink.onEvent(pending.slice(from, (int) (end - start)));
    }

    private void discardBefore(long absoluteOffset) {
        int drop = (int) Math.min(absoluteOffset - pendingBaseOffset, pending.writerIndex());
        if (drop > 0) {
            pending.readerIndex(drop);
            pending.discardReadBytes();
            pendingBaseOffset += drop;
        }
    }

    @Override
    public boolean finish(EventSink sink) {
        ((ByteArrayFeeder) parser.getNonBlockingInputFeeder()).endOfInput();
        try {
            if (!drain(sink)) {
                return false;
            }
        } catch (IOException e) {
            sink.onFramingError(messageOf(e));
            return false;
        }
        if (!done) {
            sink.onFramingError(depth == 0 ? "empty JSON body" : "JSON body ends before its closing bracket");
            return false;
        }
        return true;
    }

    private static String messageOf(IOException e) {
        return e instanceof com.fasterxml.jackson.core.JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
    }

    @Override
    public void release() {
        if (pending.refCnt() > 0) {
            pending.release();
        }
        try {
            parser.close();
        } catch (IOException ignored) {
            // nothing held
        }
    }
}
