package io.iqstream.server.stream;

import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.storage.RecordFile;
import io.iqstream.server.storage.StoreWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.FullHttpResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A catch-up read of a cold stream ({@code --cold-after}) answered from its file, the stream left cold: the page
 * after the request's offset is read on the storage thread of the stream's worker (the worker never waits for the
 * disk) and sent as the same page a stream in memory would give, with the same headers. Only the page is held, and
 * charged to the memory budget's share for readers of old history ({@link MemoryBudget#tryChargeCopy}) until it is
 * written out; refused, the read is a 503 with {@code Retry-After}, as a load refused would be.
 *
 * <p>Where to start reading comes from the stream's {@link DurableStream#coldIndex}, built by the first such read
 * (one scan of the file, a window at a time) and kept while the stream stays cold: a read scans at most
 * {@link ColdIndex#STRIDE_BYTES} of messages before its page. The file's records interleave each message with its
 * producer's state, so a page is copied out of the records (into pooled buffers) rather than sent from the file
 * with {@code sendfile}: the kernel would need one region per message, and TLS none at all.
 *
 * <p>A long-poll behind the tail is answered the same way, with its cursor; one at the tail waits without the
 * stream's bytes (the append that wakes it loads them). An SSE read, or a write, loads the stream ({@link
 * ColdLoad}). One per request: {@link #read} on the
 * storage thread, everything else on the stream's owner worker.
 */
final class ColdRead implements StreamAnswer, StoreWriter.FileRead {
    private static final Logger LOG = LoggerFactory.getLogger(ColdRead.class);
    /** The pooled buffers a page is copied into (a larger message gets one of its own size). */
    static final int CHUNK_BYTES = 64 * 1024;

    private final StreamReply reply;
    private final DurableStream stream;
    private final long position;
    private final String from;
    private final ByteBufAllocator alloc;
    private final MemoryBudget budget;
    // what the stream was when the read was asked (the file holds at least that; a cold stream takes no write)
    private final long tail;
    private final boolean closed;
    private final boolean json;
    private final long[] index;
    /** A long-poll's {@code Stream-Cursor}, or null for a catch-up. */
    private final String cursor;

    // found on the storage thread, read on the worker after (the queue's hand-off orders them)
    private final List<ByteBuf> chunks = new ArrayList<>(2);
    private long chargedBytes;
    private int messages;
    private long next;
    private long[] builtIndex;
    private IOException failure;
    private boolean overBudget;

    // the answer, on the worker
    private boolean reading = true;
    private boolean connectionClosed;
    private Consumer<Boolean> whenDone;

    private ColdRead(StreamReply reply, DurableStream s, long position, String from, String cursor) {
        this.reply = reply;
        this.stream = s;
        this.position = position;
        this.from = from;
        this.alloc = reply.ctx.alloc();
        this.budget = reply.streams.budget();
        this.tail = s.tail();
        this.closed = s.isClosed();
        this.json = s.json;
        this.index = s.coldIndex;
        this.cursor = cursor;
    }

    /**
     * Reads the page of cold stream {@code s} after {@code position} ({@code from}: the offset as asked; {@code
     * cursor}: a long-poll's next {@code Stream-Cursor}, or null).
     */
    static ColdRead start(StreamReply reply, DurableStream s, long position, String from, String cursor) {
        ColdRead r = new ColdRead(reply, s, position, from, cursor);
        reply.streams.readCold(s, r);
        return r;
    }

    // ---- on the storage thread ------------------------------------------------------------------------------

    @Override
    public void read(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long[] at = index;
            if (at == null) {
                at = builtIndex = index(ch);
            }
            page(ch, at);
        } catch (IOException | RuntimeException e) {
            failure = e instanceof IOException io ? io : new IOException(e.toString(), e);
            freePage();
        }
    }

    /** Scans the whole file once for its {@link ColdIndex}. */
    private long[] index(FileChannel ch) throws IOException {
        ColdIndex.Builder index = new ColdIndex.Builder();
        long logical = 0;
        RecordFile.Scanner scan = new RecordFile.Scanner(ch, 0);
        for (ByteBuffer p = scan.next(); p != null && logical < tail; p = scan.next()) {
            long m = StreamRecords.messageIn(p);
            if (m >= 0) {
                index.message(logical, scan.recordPosition());
                logical += (int) m;
            }
        }
        if (logical < tail) {
            throw new IOException("the file holds " + logical + " bytes of messages, not the " + tail
                    + " acknowledged");
        }
        return index.build();
    }

    /** The page after {@link #position}: from the last index entry at or below it, up to a page's bytes. */
    private void page(FileChannel ch, long[] at) throws IOException {
        int e = ColdIndex.entryFor(at, position);
        long logical = at[e];
        RecordFile.Scanner scan = new RecordFile.Scanner(ch, at[e + 1]);
        long bytes = 0;
        if (json && !write(new byte[] {'['})) {
            return;
        }
        for (ByteBuffer p = scan.next(); p != null && logical < tail; p = scan.next()) {
            long m = StreamRecords.messageIn(p);
            if (m < 0) {
                continue;
            }
            int length = (int) m;
            long end = logical + length;
            if (end > position) {
                if (bytes >= LiveRead.MAX_READ_BYTES && messages > 0) {
                    break;
                }
                if (json && messages > 0 && !write(new byte[] {','})) {
                    return;
                }
                ByteBuffer message = p.slice(p.position() + (int) (m >>> 32), length);
                if (!write(message)) {
                    return;
                }
                messages++;
                bytes += length;
                next = end;
            }
            logical = end;
        }
        if (messages == 0 || logical > tail) {
            throw new IOException("the file holds no whole message after byte " + position + " below the tail "
                    + tail);
        }
        if (json) {
            write(new byte[] {']'});
        }
    }

    private boolean write(byte[] bytes) {
        return write(ByteBuffer.wrap(bytes));
    }

    /** Copies {@code bytes} into the page, taking a chunk (charged) when the last is full; false when refused. */
    private boolean write(ByteBuffer bytes) {
        while (bytes.hasRemaining()) {
            ByteBuf last = chunks.isEmpty() ? null : chunks.get(chunks.size() - 1);
            if (last == null || !last.isWritable()) {
                int size = Math.max(CHUNK_BYTES, bytes.remaining() + 1); // +1: a JSON page's closing bracket
                if (!budget.tryChargeCopy(size)) {
                    overBudget = true;
                    freePage();
                    return false;
                }
                chargedBytes += size;
                last = alloc.directBuffer(size, size);
                chunks.add(last);
            }
            int n = Math.min(last.writableBytes(), bytes.remaining());
            last.writeBytes(bytes.slice(bytes.position(), n));
            bytes.position(bytes.position() + n);
        }
        return true;
    }

    /** Releases the page's chunks and gives back their charge (a refused or failed read, a closed connection). */
    private void freePage() {
        for (ByteBuf c : chunks) {
            c.release();
        }
        chunks.clear();
        budget.releaseCopy(chargedBytes);
        chargedBytes = 0;
    }

    @Override
    public void abandoned() {
        freePage(); // the worker stopped before it could send the page
    }

    // ---- on the worker ----------------------------------------------------------------------------------------

    @Override
    public void done() {
        reading = false;
        if (connectionClosed) {
            freePage();
        } else if (failure != null) {
            LOG.error("stream {}: a read of its file failed ({}); its reads answer 500 until it can be read",
                    stream.path, failure.toString());
            reply.fileUnreadable();
        } else if (overBudget) {
            reply.overBudget();
        } else {
            answer();
        }
        Consumer<Boolean> then = whenDone;
        whenDone = null;
        if (then != null) {
            then.accept(reply.keepAlive);
        }
    }

    private void answer() {
        if (builtIndex != null) {
            reply.streams.keepColdIndex(stream, builtIndex);
        }
        reply.settings.metrics().durableColdReads.increment();
        boolean closedHere = next >= tail && closed;
        String etag = DurableStreamProtocol.etag(reply.path, from, DurableStreamProtocol.offset(next), closedHere);
        FullHttpResponse notModified = LiveRead.notModified(reply, etag);
        if (notModified != null) {
            freePage();
            reply.send(notModified);
            return;
        }
        ByteBuf content;
        if (chunks.size() == 1) {
            content = chunks.get(0);
        } else {
            CompositeByteBuf all = alloc.compositeDirectBuffer(chunks.size());
            for (ByteBuf c : chunks) {
                all.addComponent(true, c);
            }
            content = all;
        }
        chunks.clear();
        long charge = chargedBytes;
        chargedBytes = 0;
        ChannelFuture written = reply.send(LiveRead.page(reply, stream, content, next, tail, closed, etag, cursor));
        written.addListener(f -> budget.releaseCopy(charge));
    }

    @Override
    public boolean isDone() {
        return !reading;
    }

    @Override
    public void closed() {
        connectionClosed = true;
    }

    @Override
    public boolean awaitsStorage() {
        return reading;
    }

    @Override
    public void whenDone(Consumer<Boolean> then) {
        if (reading) {
            whenDone = then;
        } else {
            then.accept(reply.keepAlive);
        }
    }
}
