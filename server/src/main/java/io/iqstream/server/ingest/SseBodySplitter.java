package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * {@code text/event-stream}: SSE frames as AG-UI agents emit them. The {@code data:} lines of a frame, joined with
 * LF, form the event; {@code event:}, {@code id:}, {@code retry:} and comments are ignored; a blank line ends the
 * frame. A backend can pipe its own AG-UI SSE output straight in.
 */
final class SseBodySplitter implements EventSplitter {
    private static final byte[] DATA = {'d', 'a', 't', 'a'};

    private final int maxEventBytes;
    private final LineReader lines;
    private final ByteBuf data;
    private boolean hasData;
    private boolean oversize;
    private EventSink sink;
    private final LineReader.LineSink onLine = this::onLine;

    SseBodySplitter(int maxEventBytes) {
        this.maxEventBytes = maxEventBytes;
        this.lines = new LineReader(maxEventBytes + 16);
        this.data = Unpooled.buffer(512);
    }

    private boolean onLine(ByteBuf line) {
        int n = line.readableBytes();
        if (n == 0) {
            if (!hasData) {
                return true;
            }
            hasData = false;
            boolean go = sink.onEvent(data);
            data.clear();
            return go;
        }
        int at = line.readerIndex();
        if (n < 4 || line.getByte(at) == ':') {
            return true;
        }
        for (int i = 0; i < 4; i++) {
            if (line.getByte(at + i) != DATA[i]) {
                return true;
            }
        }
        int valueAt;
        if (n == 4) {
            valueAt = at + 4;
        } else if (line.getByte(at + 4) == ':') {
            valueAt = at + 5;
            if (valueAt < at + n && line.getByte(valueAt) == ' ') {
                valueAt++;
            }
        } else {
            return true;
        }
        int valueLength = at + n - valueAt;
        if (data.readableBytes() + valueLength + 1 > maxEventBytes) {
            oversize = true;
            return false;
        }
        if (hasData) {
            data.writeByte('\n');
        }
        data.writeBytes(line, valueAt, valueLength);
        hasData = true;
        return true;
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        this.sink = sink;
        if (!lines.feed(chunk, onLine)) {
            if (oversize || lines.overflowed()) {
                sink.onOversizeEvent();
            }
            return false;
        }
        return true;
    }

    @Override
    public boolean finish(EventSink sink) {
        this.sink = sink;
        if (!lines.finish(onLine)) {
            if (oversize) {
                sink.onOversizeEvent();
            }
            return false;
        }
        if (hasData) {
            hasData = false;
            boolean go = sink.onEvent(data);
            data.clear();
            return go;
        }
        return true;
    }

    @Override
    public void release() {
        lines.release();
        if (data.refCnt() > 0) {
            data.release();
        }
    }
}
