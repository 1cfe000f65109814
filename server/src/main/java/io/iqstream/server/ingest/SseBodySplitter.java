package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * {@code text/event-stream}: SSE frames as AG-UI agents emit them. The {@code data:} lines of a frame, joined with
 * LF, form the event; {@code event:}, {@code id:}, {@code retry:} and comments are ignored (they count as activity,
 * like blank lines between frames); a blank line ends the frame. Lines end in LF, a CR before it is dropped. A
 * backend can pipe its own AG-UI SSE output straight in.
 *
 * <h2>Implementation notes</h2>
 * A frame with one {@code data:} line that arrives inside one chunk is handed out as a slice of that chunk (the
 * common case, no copy). Otherwise the data values are gathered in a {@link PartialEventBuffer}; a line that
 * spans chunks is classified from its first bytes (at most six kept in {@link #head}) and then only the value of a
 * data line is kept, so a long comment or {@code event:} line holds nothing. The joined data is capped at the
 * event size plus one byte (a CR not yet known to end its line): past it the event is refused before its end.
 */
final class SseBodySplitter implements EventSplitter {
    private static final byte[] DATA = {'d', 'a', 't', 'a', ':'};
    /** No line in progress: the next byte starts one. */
    private static final int LINE_START = 0;
    /** A line in progress whose kind is not known yet (its first bytes are in {@link #head}). */
    private static final int FIELD = 1;
    /** A data line in progress: its value goes to {@link #data}. */
    private static final int DATA_VALUE = 2;
    /** A comment or other field in progress: skipped to its LF. */
    private static final int SKIP = 3;

    private final PartialEventBuffer data;
    private final byte[] head = new byte[DATA.length + 1];
    private int headLength;
    private int state = LINE_START;
    private boolean skipSpace;
    private int lineValueStart;
    private boolean hasData;
    /** The frame's single data value, still in the current chunk; -1 when none. */
    private int pendingIndex = -1;
    private int pendingLength;
    private ByteBuf pendingChunk;
    private EventSink sink;

    /** {@code data} gathers a frame's data that spans chunks; its cap is the event cap plus one (a trailing CR). */
    SseBodySplitter(PartialEventBuffer data) {
        this.data = data;
    }

    @Override
    public boolean isSse() {
        return true;
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        this.sink = sink;
        int from = chunk.readerIndex();
        int end = chunk.writerIndex();
        boolean go = true;
        while (go && from < end) {
            int lf = chunk.forEachByte(from, end - from, ByteProcessor.FIND_LF);
            int stop = lf < 0 ? end : lf;
            if (state == LINE_START && lf >= 0) {
                go = completeLine(chunk, from, lf - from);
            } else {
                if (state == LINE_START) {
                    go = materializePending();
                    state = FIELD;
                    headLength = 0;
                }
                go = go && continueLine(chunk, from, stop);
                if (go && lf >= 0) {
                    go = endLine();
                }
            }
            from = stop + 1;
        }
        if (go) {
            go = materializePending();
        }
        pendingChunk = null;
        return go;
    }

    /** A whole line inside the chunk: classified in place. */
    private boolean completeLine(ByteBuf chunk, int at, int length) {
        if (length > 0 && chunk.getByte(at + length - 1) == '\r') {
            length--;
        }
        if (length == 0) {
            return endFrame(chunk);
        }
        if (!startsWithData(chunk, at, length)) {
            sink.onKeepAlive();
            return true;
        }
        int valueAt = at + Math.min(length, DATA.length);
        if (valueAt < at + length && chunk.getByte(valueAt) == ' ') {
            valueAt++;
        }
        int valueLength = at + length - valueAt;
        if (!hasData && data.readableBytes() == 0) {
            hasData = true;
            pendingChunk = chunk;
            pendingIndex = valueAt;
            pendingLength = valueLength;
            return true;
        }
        if (!materializePending() || !startDataLine()) {
            return false;
        }
        return check(data.append(chunk, valueAt, valueLength));
    }

    /** "data" alone, or "data:" then the value. */
    private static boolean startsWithData(ByteBuf line, int at, int length) {
        if (length < 4) {
            return false;
        }
        for (int i = 0; i < 4; i++) {
            if (line.getByte(at + i) != DATA[i]) {
                return false;
            }
        }
        return length == 4 || line.getByte(at + 4) == ':';
    }

    /** Bytes of a line that spans chunks (up to its LF or the chunk's end). */
    private boolean continueLine(ByteBuf chunk, int from, int stop) {
        while (state == FIELD && from < stop) {
            classify(chunk.getByte(from++));
            if (state == DATA_VALUE && !startDataLine()) {
                return false;
            }
        }
        if (state == DATA_VALUE && from < stop) {
            if (skipSpace) {
                skipSpace = false;
                if (chunk.getByte(from) == ' ') {
                    from++;
                }
            }
            return check(data.append(chunk, from, stop - from));
        }
        return true;
    }

    /** One more first byte of a line in progress: decides whether it is a data line once it can. */
    private void classify(byte b) {
        boolean afterCr = headLength > 0 && head[headLength - 1] == '\r';
        head[headLength++] = b;
        if (b == '\r' && !afterCr) {
            return; // may be the line's end: wait for the next byte
        }
        if (afterCr || head[0] == ':') {
            state = SKIP;
            return;
        }
        int i = headLength - 1;
        if (b != DATA[i]) {
            state = SKIP;
        } else if (i == DATA.length - 1) {
            state = DATA_VALUE;
            skipSpace = true;
        }
    }

    /** The LF of a line that spanned chunks. */
    private boolean endLine() {
        int kind = state;
        state = LINE_START;
        skipSpace = false;
        if (kind == DATA_VALUE) {
            if (data.readableBytes() > lineValueStart && data.lastByte() == '\r') {
                data.dropLast(1);
            }
            return true;
        }
        if (kind == SKIP) {
            sink.onKeepAlive();
            return true;
        }
        int n = headLength;
        if (n > 0 && head[n - 1] == '\r') {
            n--;
        }
        if (n == 0) {
            return endFrame(null);
        }
        if (n == 4 && head[0] == 'd' && head[1] == 'a' && head[2] == 't' && head[3] == 'a') {
            return startDataLine(); // "data" with no colon: an empty value
        }
        sink.onKeepAlive();
        return true;
    }

    /** A data line begins: the frame's data so far gets its LF separator. */
    private boolean startDataLine() {
        if (hasData && !check(data.appendByte('\n'))) {
            return false;
        }
        hasData = true;
        lineValueStart = data.readableBytes();
        return true;
    }

    /** Copies a single data value still in the chunk into {@link #data} (the chunk is about to go). */
    private boolean materializePending() {
        if (pendingIndex < 0) {
            return true;
        }
        int index = pendingIndex;
        pendingIndex = -1;
        return check(data.append(pendingChunk, index, pendingLength));
    }

    /** A blank line: the frame ends; its data, if any, is one event. */
    private boolean endFrame(ByteBuf chunk) {
        if (!hasData) {
            sink.onKeepAlive();
            return true;
        }
        hasData = false;
        boolean go;
        if (pendingIndex >= 0) {
            int index = pendingIndex;
            pendingIndex = -1;
            go = ChunkWindow.onEvent(sink, chunk, index, pendingLength);
        } else {
            go = sink.onEvent(data.content());
        }
        data.clear();
        return go;
    }

    private boolean check(PartialEventBuffer.Outcome outcome) {
        switch (outcome) {
            case OK -> {
                return true;
            }
            case OVER_CAP -> sink.onOversizeEvent();
            case OVER_BUDGET -> sink.onOverBudget();
            default -> throw new IllegalStateException(outcome.name());
        }
        return false;
    }

    @Override
    public boolean finish(EventSink sink) {
        this.sink = sink;
        if (state != LINE_START && !endLine()) {
            return false;
        }
        return endFrame(null);
    }

    @Override
    public int heldBytes() {
        return data.readableBytes();
    }

    @Override
    public void release() {
        pendingChunk = null;
        pendingIndex = -1;
        data.release();
    }
}
