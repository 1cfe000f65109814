package io.iqstream.server.stream;

import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.ProducerLedger;
import io.iqstream.server.storage.RecordFile;
import io.iqstream.server.storage.StreamStore;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the durable streams of a data directory again, at start, before the server serves: each file's whole
 * records ({@link RecordFile#recover} cuts a torn tail first) replayed in order — the creation, every acknowledged
 * message with its boundaries, producer state and {@code Stream-Seq}, the closure, a soft deletion — sources before
 * their forks, which hold them as they did. A stream's sliding TTL starts again at the restart; an expiry stays.
 *
 * <p>One file's records at a time: a data directory may be many times the heap. A first pass reads each file's
 * first record only (which streams are forks' sources); the second recovers each file in turn and makes its
 * stream at once (cold unless a fork's source), dropping its records; forks, rare, are read again after their
 * sources are made.
 *
 * <p>A file whose first record is not a creation, or whose records do not parse, is left in place, logged, and not
 * served; so is a fork whose source is missing. The rest start.
 *
 * <p>On the starting thread, before any worker serves (the streams' owner loops see them through the start's
 * happens-before).
 */
final class StreamRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(StreamRecovery.class);

    /** A stream file's creation and, once read, its other records ({@code rest}; null until then). */
    private record Loaded(String file, StreamRecords.Create create, Path path, List<ByteBuffer> rest) {}

    private StreamRecovery() {}

    /** Recovers every stream of {@code store} into {@code streams}; returns how many. */
    static int recover(DurableStreams streams, StreamStore store, Metrics metrics, ByteBufAllocator alloc)
            throws IOException {
        long t0 = System.nanoTime();
        // which streams are forks' sources: each file's first record names its source (a window of each file)
        Set<String> sources = new HashSet<>();
        for (Path file : store.directory().streamFiles()) {
            ByteBuffer first = RecordFile.firstRecord(file);
            StreamRecords.Create c = first != null && StreamRecords.kind(first) == StreamRecords.CREATE
                    ? StreamRecords.readCreate(first) : null;
            if (c != null && c.parentPath() != null) {
                sources.add(c.parentPath());
            }
        }
        // each file in turn: a stream that is no fork is made from it at once, and its records dropped (a start
        // holds one file's at a time); a stream neither a fork nor a fork's source starts cold (--cold-after): its
        // bytes stay in its file until a request needs them. Forks wait for their sources (below).
        Map<String, Loaded> forks = new LinkedHashMap<>();
        Map<String, DurableStream> made = new HashMap<>();
        long[] cut = {0};
        store.directory().recoverStreams(f -> {
            String name = f.path().getFileName().toString();
            if (f.cutBytes() > 0) {
                cut[0] += f.cutBytes();
                LOG.warn("stream file {}: cut {} bytes of a torn tail (a write not acknowledged)", name,
                        f.cutBytes());
            }
            if (f.damagedAt() >= 0) {
                damaged(streams, name, "a record at byte " + f.damagedAt() + " is not whole and more data follows it");
                return;
            }
            if (f.payloads().isEmpty()) {
                return;
            }
            StreamRecords.Create c = StreamRecords.kind(f.payloads().get(0)) == StreamRecords.CREATE
                    ? StreamRecords.readCreate(f.payloads().get(0)) : null;
            if (c == null) {
                damaged(streams, name, "its first record is not a stream's creation");
                return;
            }
            if (made.containsKey(c.path()) || forks.containsKey(c.path())) {
                damaged(streams, name, "another file holds the stream " + c.path());
                return;
            }
            if (c.parentPath() != null) {
                forks.put(c.path(), new Loaded(name, c, f.path(), null)); // read again once its source is made
                return;
            }
            Loaded l = new Loaded(name, c, f.path(), f.payloads().subList(1, f.payloads().size()));
            made.put(c.path(), make(streams, l, null, alloc, streams.keepsColdStreams()
                    && !sources.contains(c.path())));
        });
        // forks, each once its source is made (a fork of a fork after it), each file read again
        boolean progress = true;
        while (progress && !forks.isEmpty()) {
            progress = false;
            for (Iterator<Loaded> it = forks.values().iterator(); it.hasNext(); ) {
                Loaded l = it.next();
                String parentPath = l.create().parentPath();
                if (!made.containsKey(parentPath)) {
                    continue;
                }
                it.remove();
                progress = true;
                DurableStream parent = made.get(parentPath);
                if (parent == null) {
                    damaged(streams, l.file(), "the fork's source " + parentPath + " was not recovered");
                    made.put(l.create().path(), null);
                    continue;
                }
                RecordFile.Records r = RecordFile.parse(Files.readAllBytes(l.path()));
                if (r.damaged() || r.payloads().isEmpty()) {
                    damaged(streams, l.file(), "it changed while the server started");
                    made.put(l.create().path(), null);
                    continue;
                }
                Loaded whole = new Loaded(l.file(), l.create(), l.path(), r.payloads().subList(1, r.payloads().size()));
                made.put(l.create().path(), make(streams, whole, parent, alloc, false));
            }
        }
        for (Loaded l : forks.values()) {
            damaged(streams, l.file(), "the fork's source " + l.create().parentPath() + " is not in the data directory");
        }
        int n = 0;
        for (DurableStream s : made.values()) {
            if (s != null) {
                n++;
            }
        }
        for (DurableStream s : made.values()) {
            if (s != null) {
                streams.freeIfUnheld(s);
            }
        }
        metrics.durableStreamsRecovered.add(n);
        metrics.durableRecoveryCutBytes.add(cut[0]);
        metrics.durableRecoveryMs = (System.nanoTime() - t0) / 1_000_000;
        return n;
    }

    /**
     * A stream file that cannot be served as it is: logged, left in place, and its path answers 500 with {@code
     * reason} (never 404, never created again over it), while the other streams start.
     */
    private static void damaged(DurableStreams streams, String fileName, String reason) {
        LOG.error("stream file {}: damaged, {}; left in place as it is, its stream answers 500 stream_damaged",
                fileName, reason);
        streams.damaged(fileName, reason);
    }

    /** One stream from its records; null (logged, marked damaged) when a record does not parse. */
    private static DurableStream make(DurableStreams streams, Loaded l, DurableStream parent, ByteBufAllocator alloc,
            boolean cold) {
        StreamRecords.Create c = l.create();
        long now = System.currentTimeMillis();
        if (parent != null && !parent.log.holdForFork()) {
            damaged(streams, l.file(), "its source " + c.parentPath() + " cannot be held");
            return null;
        }
        DurableStream s = new DurableStream(c.path(), c.contentType(), c.ttlSeconds(), c.expiresAt(),
                c.expiresAtMs(), parent, c.forkPosition(), c.forkSubOffset(), c.createdClosed(), now, alloc);
        long heap = DurableStreams.bookkeepingBytes(c.path(), c.contentType(), c.expiresAt());
        long logBytes = 0;
        long held = 0;
        ColdIndex.Builder index = cold ? new ColdIndex.Builder() : null; // as a read of its file would build it
        if (c.createdClosed()) {
            s.close();
        }
        for (ByteBuffer p : l.rest()) {
            byte kind = StreamRecords.kind(p);
            if (kind == StreamRecords.DELETE) {
                s.softDeleted = true;
                continue;
            }
            StreamRecords.Append a = kind == StreamRecords.APPEND ? StreamRecords.readAppend(p) : null;
            if (a == null) {
                damaged(streams, l.file(), "a record does not parse");
                s.log.release();
                if (parent != null) {
                    parent.log.releaseFork();
                }
                return null;
            }
            if (a.data() != null && cold) {
                index.message(s.coldTail, RecordFile.positionOf(p));
                s.coldTail += a.data().length;
            } else if (a.data() != null) {
                logBytes += s.log.chargeFor(a.data().length);
                s.log.appendCommitted(Unpooled.wrappedBuffer(a.data()));
                held += a.data().length;
            }
            if (a.producerId() != null) {
                if (!s.producers.knows(a.producerId())) {
                    heap += ProducerLedger.bytesFor(a.producerId());
                }
                s.producers.accept(a.producerId(), a.epoch(), a.seq(), a.timeMs());
                if (a.closes()) {
                    s.producers.recordClosingAppend(a.producerId(), a.epoch(), a.seq());
                }
            }
            if (a.streamSeq() != null) {
                heap += DurableStreams.seqBytes(a.streamSeq()) - DurableStreams.seqBytes(s.lastSeq);
                s.lastSeq = a.streamSeq();
            }
            if (a.closes()) {
                s.close();
            }
        }
        if (cold && !s.softDeleted) {
            s.log.retireIfUnheld();
            s.cold = true;
            s.coldIndex = index.build();
            heap += ColdIndex.bytes(s.coldIndex);
        }
        if (!streams.chargeRecovered(s, heap, logBytes)) {
            LOG.warn("stream {}: recovered past the memory budget (what was acknowledged is loaded whatever the "
                    + "budget says)", c.path());
        }
        streams.put(s);
        streams.metricsHeld(held);
        return s;
    }
}
