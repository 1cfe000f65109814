package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * {@code application/json}: one event object, or an array of event objects. Each element of a streamed array is
 * handed out as soon as its closing brace arrives; whitespace of any kind (a pretty-printed array) is fine.
 *
 * <h2>Implementation notes</h2>
 * A small structural scanner, not a parser: it finds where each element starts and ends (braces and brackets
 * outside strings, escapes inside them) and leaves the grammar of the element to {@link EventValidator}. An array
 * element must start with {@code {}: anything else (a nested array, a string, a number...) is refused at its
 * first byte, so nothing of it is held. An element inside one chunk is handed out as a slice of it; one that spans
 * chunks is gathered in a {@link PartialEventBuffer}, capped at the event size: past it the event is refused
 * before its end. Confined to the connection's loop; nothing is allocated per event.
 */
final class JsonBodySplitter implements EventSplitter, ByteProcessor {
    private static final int BODY_START = 0;
    private static final int ARRAY_FIRST = 1;
    private static final int ARRAY_NEXT = 2;
    private static final int ARRAY_AFTER = 3;
    private static final int ELEMENT = 4;
    private static final int DONE = 5;

    private final PartialEventBuffer partial;
    private int state = BODY_START;
    private boolean array;
    private int depth;
    private boolean inString;
    private boolean escape;
    private int elements;

    JsonBodySplitter(PartialEventBuffer partial) {
        this.partial = partial;
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        int at = chunk.readerIndex();
        int end = chunk.writerIndex();
        boolean spaces = false;
        while (at < end) {
            if (state == ELEMENT) {
                int last = chunk.forEachByte(at, end - at, this);
                if (last < 0) {
                    return hold(chunk, at, end - at, sink);
                }
                boolean go;
                if (partial.readableBytes() > 0) {
                    if (!hold(chunk, at, last + 1 - at, sink)) {
                        return false;
                    }
                    go = sink.onEvent(partial.content());
                    partial.clear();
                } else {
                    go = ChunkWindow.onEvent(sink, chunk, at, last + 1 - at);
                }
                if (!go) {
                    return false;
                }
                state = array ? ARRAY_AFTER : DONE;
                at = last + 1;
                continue;
            }
            byte b = chunk.getByte(at);
            if (b == ' ' || b == '\n' || b == '\r' || b == '\t') {
                spaces = true;
                at++;
                continue;
            }
            if (!structural(b, sink)) {
                return false;
            }
            if (state != ELEMENT) {
                at++;
            }
        }
        if (spaces) {
            sink.onKeepAlive();
        }
        return true;
    }

    /** A byte outside any element: the array's punctuation, or the first byte of an element. */
    private boolean structural(byte b, EventSink sink) {
        switch (state) {
            case BODY_START -> {
                if (b == '[') {
                    array = true;
                    state = ARRAY_FIRST;
                } else if (b == '{') {
                    startElement();
                } else {
                    sink.onFramingError("body is neither an event object nor an array of them");
                    return false;
                }
            }
            case ARRAY_FIRST, ARRAY_NEXT -> {
                if (b == '{') {
                    startElement();
                } else if (b == ']' && state == ARRAY_FIRST) {
                    state = DONE;
                } else if (startsValue(b)) {
                    sink.onBadEvent("array element " + (elements + 1) + " is not an event object"
                            + (b == '[' ? " (nested arrays are not taken)" : ""));
                    return false;
                } else {
                    sink.onFramingError("malformed JSON array: unexpected '" + printable(b) + "'");
                    return false;
                }
            }
            case ARRAY_AFTER -> {
                if (b == ',') {
                    state = ARRAY_NEXT;
                } else if (b == ']') {
                    state = DONE;
                } else {
                    sink.onFramingError("malformed JSON array: expected ',' or ']' after element " + elements);
                    return false;
                }
            }
            default -> {
                sink.onFramingError("unexpected content after the end of the JSON body");
                return false;
            }
        }
        return true;
    }

    private void startElement() {
        state = ELEMENT;
        elements++;
        depth = 0;
        inString = false;
        escape = false;
    }

    private static boolean startsValue(byte b) {
        return b == '[' || b == '"' || b == '-' || (b >= '0' && b <= '9') || b == 't' || b == 'f' || b == 'n';
    }

    private static String printable(byte b) {
        return b >= 0x20 && b < 0x7F ? String.valueOf((char) b) : String.format("\\x%02X", b & 0xFF);
    }

    /** Scans an element: false at the byte that closes it. */
    @Override
    public boolean process(byte b) {
        if (inString) {
            if (escape) {
                escape = false;
            } else if (b == '\\') {
                escape = true;
            } else if (b == '"') {
                inString = false;
            }
            return true;
        }
        switch (b) {
            case '"' -> inString = true;
            case '{', '[' -> depth++;
            case '}', ']' -> {
                return --depth != 0;
            }
            default -> { }
        }
        return true;
    }

    private boolean hold(ByteBuf chunk, int at, int length, EventSink sink) {
        switch (partial.append(chunk, at, length)) {
            case OK -> {
                return true;
            }
            case OVER_CAP -> sink.onOversizeEvent();
            case OVER_BUDGET -> sink.onOverBudget();
            default -> throw new IllegalStateException();
        }
        return false;
    }

    @Override
    public boolean finish(EventSink sink) {
        if (state == DONE) {
            return true;
        }
        if (state == ELEMENT) {
            sink.onFramingError("JSON body ends inside event " + elements);
        } else {
            sink.onFramingError(state == BODY_START ? "empty JSON body" : "JSON body ends before its closing bracket");
        }
        return false;
    }

    @Override
    public int heldBytes() {
        return partial.readableBytes();
    }

    @Override
    public void release() {
        partial.release();
    }
}
