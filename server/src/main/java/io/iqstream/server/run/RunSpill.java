package io.iqstream.server.run;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.iqstream.server.storage.DataDirectory;
import io.iqstream.server.storage.RecordFile;
import io.iqstream.server.storage.StoreWriter;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The files of ended runs ({@code --durability disk}): a run that ends is written once, whole, to a file of its own
 * in the data directory ({@link DataDirectory#runFile}), so that its memory can be freed for the rest of its
 * retention and it outlives the process. A running run never touches the disk: this is called at its end only.
 *
 * <p>A run's file holds two records ({@link RecordFile}): a header (the run's id, protocol, thread, start stamp,
 * end time and event count, as JSON) and its events' SSE frames as the log held them ({@code id: N\ndata: <json>
 * \n\n}, one after another). Reading it back parses the frames and checks every id is the next one, so a file that
 * is damaged (a record's checksum catches a torn or flipped byte) is never served.
 *
 * <p>The writes and reads go through the worker's own {@link StoreWriter}: the worker's loop never waits on the
 * disk, and the outcomes come back on it. One per worker; confined to its loop, like its {@link RunRegistry}.
 */
public final class RunSpill {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RunSpill.class);
    private static final JsonFactory JSON = new JsonFactory();
    private static final int VERSION = 1;

    private final DataDirectory dir;
    private final StoreWriter writer;
    private final java.util.function.BooleanSupplier diskFull;

    /** Writes through {@code writer} into {@code dir}; none while {@code diskFull} says the disk budget is spent. */
    public RunSpill(DataDirectory dir, StoreWriter writer, java.util.function.BooleanSupplier diskFull) {
        this.dir = dir;
        this.writer = writer;
        this.diskFull = diskFull;
    }

    /** What a run's file says of it: its header, and each event's JSON in order (ids 1..n). */
    public record Saved(String runId, RunProtocol protocol, String threadId, long startedAtMicros, long endedAtMs,
            List<ByteBuffer> events) {}

    /**
     * Queues the ended, sealed {@code run}'s file; {@code written} gets the outcome on the loop (null: durable
     * under {@code --fsync}). False, and nothing queued, when it cannot be written now: the disk budget is spent,
     * the writer's queue is full, the run has no event, or a packed segment cannot be unpacked within the memory
     * budget. The run then stays in memory, as under
     * {@code --durability memory}.
     */
    boolean write(Run run, StoreWriter.Outcome written) {
        RunLog log = run.log();
        if (diskFull.getAsBoolean() || !writer.hasRoom() || log.size() == 0) {
            return false; // a run without events has no frames record to write (a record is never empty)
        }
        ByteArrayOutputStream frames = new ByteArrayOutputStream((int) Math.min(log.frameBytes(), 1 << 26));
        long id = 1;
        while (id <= log.size()) {
            ByteBuf slice = log.readFrom(id);
            if (slice == null) {
                return false;
            }
            try {
                slice.getBytes(slice.readerIndex(), frames, slice.readableBytes());
            } catch (IOException e) {
                throw new IllegalStateException(e); // a ByteArrayOutputStream does not throw
            } finally {
                slice.release();
            }
            id = log.lastIdInSegmentOf(id) + 1;
        }
        Path file = dir.runFile(run.id());
        writer.appendTo(file, header(run), ignored -> { });
        writer.appendTo(file, frames.toByteArray(), written);
        return true;
    }

    /**
     * Holds again, each in the registry {@code ownerOf} names, the ended runs of {@code dir} whose retention has
     * not passed (see {@link RunRegistry#restore}); at start, before the workers serve. A file that cannot be read
     * is left in place and logged, and the rest are recovered. Returns how many runs are held again.
     */
    public static int recover(DataDirectory dir, java.util.function.Function<String, RunRegistry> ownerOf,
            long nowMs) throws IOException {
        int[] n = {0};
        dir.recoverRuns(f -> { // one file's records at a time
            String name = f.path().getFileName().toString();
            if (f.cutBytes() > 0) {
                LOG.warn("run file {}: cut {} bytes of a torn tail", name, f.cutBytes());
            }
            if (f.damagedAt() >= 0) {
                LOG.error("run file {}: damaged at byte {}; left in place, not served", name, f.damagedAt());
                return;
            }
            Saved saved;
            try {
                saved = parse(f.payloads());
            } catch (IOException e) {
                LOG.error("run file {}: {}; left in place, not served", name, e.getMessage());
                return;
            }
            if (!dir.runFile(saved.runId()).equals(f.path())) {
                LOG.error("run file {} holds run {}, whose file is another; left in place, not served", name,
                        saved.runId());
                return;
            }
            if (ownerOf.apply(saved.runId()).restore(saved, nowMs)) {
                n[0]++;
            }
        });
        return n[0];
    }

    /** Queues a read of {@code runId}'s file; {@code loaded} gets what it holds, or the reason it cannot. */
    void read(String runId, BiConsumer<Saved, IOException> loaded) {
        writer.read(dir.runFile(runId), (bytes, failure) -> {
            if (failure != null) {
                loaded.accept(null, failure);
                return;
            }
            try {
                loaded.accept(parse(RecordFile.parse(bytes).payloads()), null);
            } catch (IOException e) {
                loaded.accept(null, e);
            }
        });
    }

    /** Queues the removal of {@code runId}'s file (its retention passed, or DELETE). */
    void remove(String runId) {
        writer.removeFile(dir.runFile(runId), ignored -> { });
    }

    private static byte[] header(Run run) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("v", VERSION);
            g.writeStringField("run", run.id());
            g.writeStringField("protocol", run.protocol().name());
            if (run.threadId() != null) {
                g.writeStringField("thread", run.threadId());
            }
            g.writeNumberField("startedAtMicros", run.startedAtMicros());
            g.writeNumberField("endedAtMs", run.endedAtMs());
            g.writeNumberField("events", run.lastEventId());
            g.writeEndObject();
        } catch (IOException e) {
            throw new IllegalStateException(e); // in memory: cannot happen
        }
        return out.toByteArray();
    }

    /**
     * Parses a run file's records (header, frames); an IOException says what is wrong with it (not two records, a
     * header it cannot read, a frame that is not the next id).
     */
    public static Saved parse(List<ByteBuffer> records) throws IOException {
        if (records.size() != 2) {
            throw new IOException("a run's file holds a header and its events: " + records.size() + " record(s)");
        }
        ByteBuffer h = records.get(0);
        String runId = null;
        String protocol = null;
        String thread = null;
        long started = 0;
        long ended = 0;
        long events = -1;
        long version = -1;
        try (JsonParser p = JSON.createParser(h.array(), h.arrayOffset() + h.position(), h.remaining())) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("a run's header is not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "v" -> version = p.getLongValue();
                    case "run" -> runId = p.getText();
                    case "protocol" -> protocol = p.getText();
                    case "thread" -> thread = p.getText();
                    case "startedAtMicros" -> started = p.getLongValue();
                    case "endedAtMs" -> ended = p.getLongValue();
                    case "events" -> events = p.getLongValue();
                    default -> p.skipChildren();
                }
            }
        }
        if (version != VERSION || runId == null || protocol == null || events < 0) {
            throw new IOException("a run's header lacks its version " + VERSION + ", id, protocol or event count");
        }
        RunProtocol proto;
        try {
            proto = RunProtocol.valueOf(protocol);
        } catch (IllegalArgumentException e) {
            throw new IOException("run " + runId + ": unknown protocol " + protocol);
        }
        List<ByteBuffer> out = frames(runId, records.get(1));
        if (out.size() != events) {
            throw new IOException("run " + runId + ": " + out.size() + " events in its file, " + events + " in its header");
        }
        return new Saved(runId, proto, thread, started, ended, out);
    }

    private static final byte[] ID_PREFIX = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA_PREFIX = "\ndata: ".getBytes(StandardCharsets.US_ASCII);

    /** Each frame's JSON, checking the frames are {@code id: 1}, {@code id: 2}, ... with nothing between them. */
    private static List<ByteBuffer> frames(String runId, ByteBuffer b) throws IOException {
        List<ByteBuffer> out = new ArrayList<>();
        int at = b.position();
        int end = b.limit();
        long expected = 1;
        while (at < end) {
            int i = expect(b, at, ID_PREFIX, runId);
            long id = 0;
            int digits = 0;
            while (i < end && b.get(i) >= '0' && b.get(i) <= '9' && digits < 10) {
                id = id * 10 + (b.get(i) - '0');
                i++;
                digits++;
            }
            if (digits == 0 || id != expected) {
                throw new IOException("run " + runId + ": frame " + expected + " is not where it should be");
            }
            int json = expect(b, i, DATA_PREFIX, runId);
            int stop = json;
            while (stop + 1 < end && !(b.get(stop) == '\n' && b.get(stop + 1) == '\n')) {
                stop++;
            }
            if (stop + 1 >= end) {
                throw new IOException("run " + runId + ": frame " + expected + " is cut short");
            }
            out.add(b.duplicate().position(json).limit(stop).slice());
            at = stop + 2;
            expected++;
        }
        return out;
    }

    private static int expect(ByteBuffer b, int at, byte[] prefix, String runId) throws IOException {
        if (b.limit() - at < prefix.length) {
            throw new IOException("run " + runId + ": a frame is cut short");
        }
        for (int k = 0; k < prefix.length; k++) {
            if (b.get(at + k) != prefix[k]) {
                throw new IOException("run " + runId + ": a frame does not start as frames do");
            }
        }
        return at + prefix.length;
    }
}
