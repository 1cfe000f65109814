package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;

/** {@code application/x-ndjson} (and {@code application/jsonl}): one event per line; blank lines ignored. */
final class NdjsonSplitter implements EventSplitter {
    private final LineReader lines;
    private EventSink sink;
    private final LineReader.LineSink onLine = line -> LineReader.isBlank(line) || sink.onEvent(line);

    NdjsonSplitter(int maxEventBytes) {
        this.lines = new LineReader(maxEventBytes + 1);
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        this.sink = sink;
        if (!lines.feed(chunk, onLine)) {
            if (lines.overflowed()) {
                sink.onOversizeEvent();
            }
            return false;
        }
        return true;
    }

    @Override
    public boolean finish(EventSink sink) {
        this.sink = sink;
        return lines.finish(onLine);
    }

    @Override
    public void release() {
        lines.release();
    }
}
