package io.iqstream.server.ingest;

import io.netty.buffer.ByteBuf;

/**
 * {@code application/x-ndjson} (and {@code application/jsonl}): one event per line; blank lines are ignored but
 * count as activity (a backend may send them to keep a long tool call alive). A line longer than the event cap is
 * refused as soon as the cap is passed, before its end arrives.
 */
final class NdjsonSplitter implements EventSplitter {
    private final LineReader lines;
    private final int maxEventBytes;
    private EventSink sink;
    private final LineReader.LineSink onLine = this::onLine;

    /** {@code partial} holds a line that spans chunks; its cap is the event cap plus one (a CR before the LF). */
    NdjsonSplitter(PartialEventBuffer partial) {
        this.lines = new LineReader(partial);
        this.maxEventBytes = partial.capBytes() - 1;
    }

    private boolean onLine(ByteBuf line) {
        if (LineReader.isBlank(line)) {
            if (line.readableBytes() > maxEventBytes) {
                sink.onOversizeEvent(); // as it would be had it come in pieces
                return false;
            }
            sink.onKeepAlive();
            return true;
        }
        return sink.onEvent(line);
    }

    @Override
    public boolean feed(ByteBuf chunk, EventSink sink) {
        this.sink = sink;
        if (!lines.feed(chunk, onLine)) {
            PartialEventBuffer.Outcome failure = lines.failure();
            if (failure == PartialEventBuffer.Outcome.OVER_CAP) {
                sink.onOversizeEvent();
            } else if (failure == PartialEventBuffer.Outcome.OVER_BUDGET) {
                sink.onOverBudget();
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
    public int heldBytes() {
        return lines.heldBytes();
    }

    @Override
    public void release() {
        lines.release();
    }
}
