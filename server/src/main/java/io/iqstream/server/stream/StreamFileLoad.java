package io.iqstream.server.stream;

import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.run.ByteLog;
import io.iqstream.server.storage.RecordFile;
import io.iqstream.server.storage.StoreWriter;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;

/**
 * A cold stream's file read back into a new {@link ByteLog} on the storage thread ({@link DurableStreams#load}):
 * record by record through a {@link RecordFile.Scanner} (a 64 KiB window), each message copied into the log's
 * pooled segments once the memory budget has taken what it costs — the stream's bytes are charged before they are
 * held, never the whole file read into the heap first; refused, the load stops there and gives everything back.
 * The log is then handed to the stream's worker ({@link #done}), which swaps it in.
 *
 * <p>One per load: {@link #read} on the storage thread, {@link #done} on the stream's owner worker (the writer's
 * hand-off orders them).
 */
final class StreamFileLoad implements StoreWriter.FileRead {
    private final ByteBufAllocator alloc;
    private final MemoryBudget budget;
    /** What the file must give back: the tail the stream had when it went cold. */
    private final long tail;
    private final Consumer<StreamFileLoad> done;

    private ByteLog log;
    private long chargedBytes;
    private long heldBytes;
    private boolean overBudget;
    private String failure;

    StreamFileLoad(ByteBufAllocator alloc, MemoryBudget budget, long tail, Consumer<StreamFileLoad> done) {
        this.alloc = alloc;
        this.budget = budget;
        this.tail = tail;
        this.done = done;
    }

    @Override
    public void read(Path file) {
        ByteLog l = new ByteLog(alloc);
        log = l;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            RecordFile.Scanner scan = new RecordFile.Scanner(ch, 0);
            for (ByteBuffer p = scan.next(); p != null; p = scan.next()) {
                long m = StreamRecords.messageIn(p);
                if (m < 0) {
                    continue;
                }
                int length = (int) m;
                long cost = l.chargeFor(length);
                if (!budget.charge(cost, chargedBytes + cost)) {
                    overBudget = true;
                    giveBack();
                    return;
                }
                chargedBytes += cost;
                l.appendCommitted(Unpooled.wrappedBuffer(p.slice(p.position() + (int) (m >>> 32), length)));
                heldBytes += length;
            }
            if (l.tail() != tail) {
                failure = "it holds " + l.tail() + " bytes of messages, not the " + tail + " acknowledged";
                giveBack();
            }
        } catch (IOException | RuntimeException e) {
            failure = e.toString();
            giveBack();
        }
    }

    @Override
    public void done() {
        done.accept(this);
    }

    @Override
    public void abandoned() {
        giveBack(); // the worker stopped before it could take the log
    }

    /** Releases the log and gives back its charge (refused, failed, or not taken). */
    void giveBack() {
        if (log != null) {
            log.release();
            log = null;
        }
        budget.release(chargedBytes);
        chargedBytes = 0;
        heldBytes = 0;
    }

    /** The stream's log, whole and charged; null when the load was refused or failed. */
    ByteLog log() {
        return log;
    }

    long chargedBytes() {
        return chargedBytes;
    }

    long heldBytes() {
        return heldBytes;
    }

    boolean overBudget() {
        return overBudget;
    }

    /** Why the file could not be loaded, or null. */
    String failure() {
        return failure;
    }
}
