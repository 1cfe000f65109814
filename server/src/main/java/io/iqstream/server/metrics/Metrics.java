package io.iqstream.server.metrics;

import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PoolChunkListMetric;
import io.netty.buffer.PoolChunkMetric;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.EnumMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every metric of the server, named once, with its Prometheus name and help. Any thread: counters are
 * {@link LongAdder}s (uncontended, since each worker mostly touches its own cells).
 */
public final class Metrics {
    public final LongAdder runsCreated = new LongAdder();
    public final LongAdder runsEnded = new LongAdder();
    public final LongAdder runsExpired = new LongAdder();
    /** Ended runs whose bytes left memory, their file on disk holding them ({@code --durability disk}). */
    public final LongAdder runsSpilled = new LongAdder();
    /** Ended runs loaded back from their file for a reader. */
    public final LongAdder runsLoaded = new LongAdder();
    public final LongAdder runsActive = new LongAdder();
    public final LongAdder subscribersActive = new LongAdder();
    public final LongAdder subscribersTotal = new LongAdder();
    public final LongAdder publishersActive = new LongAdder();
    public final LongAdder eventsIn = new LongAdder();
    public final LongAdder bytesIn = new LongAdder();
    public final LongAdder framesOut = new LongAdder();
    public final LongAdder bytesOut = new LongAdder();
    public final LongAdder publishersLost = new LongAdder();
    public final LongAdder runsIdled = new LongAdder();
    public final LongAdder runsStopped = new LongAdder();
    public final LongAdder slowSubscribersCut = new LongAdder();
    public final LongAdder channelMoves = new LongAdder();
    /** Durable Streams ({@code /v1/stream/}): streams held, made, expired; appends, bytes, reads. */
    public final LongAdder durableStreamsActive = new LongAdder();
    public final LongAdder durableStreamsCreated = new LongAdder();
    public final LongAdder durableStreamsExpired = new LongAdder();
    public final LongAdder durableAppends = new LongAdder();
    public final LongAdder durableBytesIn = new LongAdder();
    public final LongAdder durableBytesHeld = new LongAdder();
    public final LongAdder durableBytesOut = new LongAdder();
    public final LongAdder durableReads = new LongAdder();
    public final LongAdder durableSseReaders = new LongAdder();
    public final LongAdder durableStorageFailures = new LongAdder();
    public final LongAdder durableStreamsRecovered = new LongAdder();
    public final LongAdder durableRecoveryCutBytes = new LongAdder();
    public final LongAdder durableStreamsDamaged = new LongAdder();
    public final LongAdder durableStreamsCold = new LongAdder();
    public final LongAdder durableStreamsLoaded = new LongAdder();
    public final LongAdder durableColdReads = new LongAdder();
    /** The storage layer's figures, set once at start under --durability disk. */
    public volatile java.util.function.LongSupplier diskUsedBytes = () -> 0;
    public volatile java.util.function.LongSupplier diskBudgetBytes = () -> 0;
    public volatile java.util.function.LongSupplier diskBatches = () -> 0;
    public volatile java.util.function.LongSupplier diskRecords = () -> 0;
    public volatile java.util.function.LongSupplier diskFlushNanos = () -> 0;
    public volatile java.util.function.LongSupplier diskQueuedBytes = () -> 0;
    /** How long the last start's recovery of the data directory took, in milliseconds. */
    public volatile long durableRecoveryMs;
    /** Connections held on the main port (the admin port's are not counted). */
    public final LongAdder connectionsOpen = new LongAdder();
    /**
     * Main-port connections whose live reader waits with its request path dropped (an SSE response streaming, a
     * long-poll at its tail: {@code wire.WaitingReader}); the rest of {@link #connectionsOpen} are the others.
     */
    public final LongAdder idleReaderConnections = new LongAdder();
    /** Connections closed at once because the main port was at --max-connections. */
    public final LongAdder connectionsRefusedMax = new LongAdder();
    /** Connections closed at once because the admin port was at its own small cap. */
    public final LongAdder adminConnectionsRefusedMax = new LongAdder();
    /** Connections answered 408 because a request head did not arrive whole within --header-timeout. */
    public final LongAdder headerTimeouts = new LongAdder();
    /** Connections answered 408 because a Durable Streams request's body did not arrive whole within --body-timeout. */
    public final LongAdder bodyTimeouts = new LongAdder();
    /** Keep-alive connections closed after --idle-timeout with no request. */
    public final LongAdder idleTimeouts = new LongAdder();
    public final LongAdder tombstonesEvicted = new LongAdder();
    private final EnumMap<Refusal, LongAdder> refusals = new EnumMap<>(Refusal.class);
    private final EnumMap<DemoRefusal, LongAdder> demoRefusals = new EnumMap<>(DemoRefusal.class);
    /** Demo runs held now (playing, or ended and kept for --demo-retention). */
    public final LongAdder demoRunsHeld = new LongAdder();
    /** Bytes reserved by the demo runs held now, against the demo's share of the budget. */
    public final LongAdder demoBytesHeld = new LongAdder();
    /** Demo runs created whose publish failed after the first event (logged at debug only). */
    public final LongAdder demoRunsFailed = new LongAdder();
    private final LatencyHistogram relayLatency = new LatencyHistogram("iqstream_relay_latency_seconds",
            "From an event's decode to its write to a subscriber.");
    private final LatencyHistogram resumeLatency = new LatencyHistogram("iqstream_resume_seconds",
            "From the first byte of a resuming subscriber's request (Last-Event-ID) to its replay's first write"
            + " and flush.");
    private final LatencyHistogram resumeAcceptToHead = new LatencyHistogram("iqstream_resume_accept_seconds",
            "For a resume that is its connection's first request: from the connection's accept to the request's first"
            + " byte read (the client's sending and the wait for the worker's next read), before"
            + " iqstream_resume_seconds begins.");
    /** The cluster part's metrics ({@code --peers}); rendered only once {@link #clustered()} was called. */
    public final ClusterMetrics cluster = new ClusterMetrics();
    private volatile boolean clustered;

    public Metrics() {
        for (Refusal r : Refusal.values()) {
            refusals.put(r, new LongAdder());
        }
        for (DemoRefusal r : DemoRefusal.values()) {
            demoRefusals.put(r, new LongAdder());
        }
    }

    /** This node runs with {@code --peers}: the cluster metrics are rendered. */
    public void clustered() {
        clustered = true;
    }

    public void refused(Refusal reason) {
        refusals.get(reason).increment();
    }

    public long refusals(Refusal reason) {
        return refusals.get(reason).sum();
    }

    /** A demo run not created ({@code POST /demo/api/runs} answered 429 or 503); counted, not logged. */
    public void demoRefused(DemoRefusal reason) {
        demoRefusals.get(reason).increment();
    }

    public long demoRefusals(DemoRefusal reason) {
        return demoRefusals.get(reason).sum();
    }

    /** Records one relay latency: from the event's decode to its write into a subscriber's socket. */
    public void relayLatency(long nanos) {
        relayLatency.record(nanos);
    }

    /**
     * Records one resume: from the first byte of a subscriber's request that carried a Last-Event-ID to the flush
     * of the response head and the first replayed events (the server's share of a browser's reconnect).
     */
    public void resumeLatency(long nanos) {
        resumeLatency.record(nanos);
    }

    /** Records, for a resume that is its connection's first request, the time from the accept to its first byte. */
    public void resumeAcceptToHead(long nanos) {
        resumeAcceptToHead.record(nanos);
    }

    /** The Prometheus text exposition (format 0.0.4). */
    public String render(BudgetGauges budget, boolean draining) {
        StringBuilder sb = new StringBuilder(4096);
        gauge(sb, "iqstream_runs_active", "Runs held in memory (open or within retention).", runsActive.sum());
        counter(sb, "iqstream_runs_created_total", "Runs created.", runsCreated.sum());
        counter(sb, "iqstream_runs_ended_total", "Runs that received their terminal event.", runsEnded.sum());
        counter(sb, "iqstream_runs_expired_total", "Runs freed after retention or deleted.", runsExpired.sum());
        counter(sb, "iqstream_runs_spilled_total", "Ended runs whose bytes left memory for their file on disk.",
                runsSpilled.sum());
        counter(sb, "iqstream_runs_loaded_total", "Ended runs loaded back from their file for a reader.",
                runsLoaded.sum());
        counter(sb, "iqstream_runs_publisher_lost_total", "Runs ended with RUN_ERROR PUBLISHER_LOST.",
                publishersLost.sum());
        counter(sb, "iqstream_runs_idle_ended_total", "Runs ended with RUN_ERROR RUN_IDLE.", runsIdled.sum());
        counter(sb, "iqstream_runs_stopped_total", "Running runs stopped by DELETE (RUN_ERROR STOPPED).",
                runsStopped.sum());
        gauge(sb, "iqstream_subscribers_active", "Open subscriber streams.", subscribersActive.sum());
        counter(sb, "iqstream_subscribers_total", "Subscriber streams opened.", subscribersTotal.sum());
        gauge(sb, "iqstream_publishers_active", "Open publishing requests.", publishersActive.sum());
        counter(sb, "iqstream_events_in_total", "Events appended to runs.", eventsIn.sum());
        counter(sb, "iqstream_event_bytes_in_total", "Bytes of event JSON appended.", bytesIn.sum());
        counter(sb, "iqstream_events_out_total", "Event frames written to subscribers.", framesOut.sum());
        counter(sb, "iqstream_bytes_out_total", "SSE bytes written to subscribers.", bytesOut.sum());
        counter(sb, "iqstream_slow_subscribers_cut_total", "Subscribers cut because their socket stayed full.",
                slowSubscribersCut.sum());
        counter(sb, "iqstream_channel_moves_total", "Connections moved to the worker owning their run.",
                channelMoves.sum());
        gauge(sb, "iqstream_durable_streams_active", "Durable streams held (/v1/stream/).",
                durableStreamsActive.sum());
        counter(sb, "iqstream_durable_streams_created_total", "Durable streams created.", durableStreamsCreated.sum());
        gauge(sb, "iqstream_disk_used_bytes", "Bytes durable streams' files take in --data-dir (0 under"
                + " --durability memory).", diskUsedBytes.getAsLong());
        gauge(sb, "iqstream_disk_budget_bytes", "What durable streams' files may take (--disk-budget; 0 under"
                + " --durability memory).", diskBudgetBytes.getAsLong());
        counter(sb, "iqstream_disk_batches_total", "Batches the storage threads wrote, each acknowledged by one flush"
                + " (--fsync batch: of the journal; always: of each record; never: none).", diskBatches.getAsLong());
        counter(sb, "iqstream_disk_records_total", "Records the storage threads wrote (appends, closures, deletions,"
                + " ended runs).", diskRecords.getAsLong());
        sb.append("# HELP iqstream_disk_flush_seconds_total Time the storage threads spent flushing batches to the disk"
                + " (fdatasync): with iqstream_disk_batches_total, the mean wait an append's answer has on the disk.\n"
                + "# TYPE iqstream_disk_flush_seconds_total counter\niqstream_disk_flush_seconds_total ")
                .append(diskFlushNanos.getAsLong() / 1e9).append('\n');
        gauge(sb, "iqstream_disk_queued_bytes", "Records queued for the storage threads and not yet written (past 64 MiB"
                + " a worker's writes are refused with 503).", diskQueuedBytes.getAsLong());
        counter(sb, "iqstream_durable_storage_failures_total", "Durable streams whose file refused a write (each then"
                + " takes no write until a restart).", durableStorageFailures.sum());
        gauge(sb, "iqstream_durable_streams_recovered", "Durable streams recovered from the data directory at start.",
                durableStreamsRecovered.sum());
        gauge(sb, "iqstream_durable_recovery_cut_bytes", "Bytes of torn record tails (writes never acknowledged) cut"
                + " from stream files at start.", durableRecoveryCutBytes.sum());
        gauge(sb, "iqstream_durable_streams_damaged", "Stream files found damaged at start (left as they are; their"
                + " streams answer 500 stream_damaged, the log says where).", durableStreamsDamaged.sum());
        gauge(sb, "iqstream_durable_recovery_ms", "How long recovering the data directory took at start.",
                durableRecoveryMs);
        counter(sb, "iqstream_durable_streams_cold_total", "Durable streams that went cold (--cold-after): their bytes"
                + " dropped from memory, kept by their file.", durableStreamsCold.sum());
        counter(sb, "iqstream_durable_streams_loaded_total", "Cold durable streams whose bytes were loaded from their"
                + " file again for a request.", durableStreamsLoaded.sum());
        counter(sb, "iqstream_durable_cold_reads_total", "Catch-up reads of cold durable streams answered from their"
                + " file, a page at a time, the stream left cold.", durableColdReads.sum());
        counter(sb, "iqstream_durable_streams_expired_total", "Durable streams freed by their TTL or Expires-At.",
                durableStreamsExpired.sum());
        counter(sb, "iqstream_durable_appends_total", "Messages appended to durable streams.", durableAppends.sum());
        counter(sb, "iqstream_durable_bytes_in_total", "Bytes appended to durable streams.", durableBytesIn.sum());
        gauge(sb, "iqstream_durable_bytes_held", "Bytes of messages durable streams hold.", durableBytesHeld.sum());
        counter(sb, "iqstream_durable_reads_total", "Catch-up and long-poll answers with messages.",
                durableReads.sum());
        counter(sb, "iqstream_durable_sse_bytes_out_total", "SSE bytes written to durable stream readers.",
                durableBytesOut.sum());
        gauge(sb, "iqstream_durable_sse_readers", "Open SSE reads of durable streams.", durableSseReaders.sum());
        gauge(sb, "iqstream_connections_open", "Connections open on the main port.", connectionsOpen.sum());
        long open = connectionsOpen.sum();
        long idleReaders = idleReaderConnections.sum();
        sb.append("# HELP iqstream_connections Main-port connections by state: idle_reader, a live reader waiting"
                + " with its request path dropped (SSE streaming, long-poll at the tail); other, the rest.\n");
        sb.append("# TYPE iqstream_connections gauge\n");
        sb.append("iqstream_connections{state=\"idle_reader\"} ").append(idleReaders).append('\n');
        sb.append("iqstream_connections{state=\"other\"} ").append(Math.max(0, open - idleReaders)).append('\n');
        gauge(sb, "iqstream_connection_idle_reader_bytes", "Estimated server memory (heap objects of the channel,"
                + " its pipeline and its reader) one idle_reader connection holds, in bytes.",
                ConnectionFootprint.IDLE_READER_BYTES);
        gauge(sb, "iqstream_connections_idle_reader_bytes", "iqstream_connections{state=\"idle_reader\"} times"
                + " iqstream_connection_idle_reader_bytes.", idleReaders * ConnectionFootprint.IDLE_READER_BYTES);
        sb.append("# HELP iqstream_connections_refused_total Connections closed at once on accept, by reason.\n");
        sb.append("# TYPE iqstream_connections_refused_total counter\n");
        sb.append("iqstream_connections_refused_total{reason=\"max_connections\"} ")
                .append(connectionsRefusedMax.sum()).append('\n');
        sb.append("iqstream_connections_refused_total{reason=\"admin_max_connections\"} ")
                .append(adminConnectionsRefusedMax.sum()).append('\n');
        sb.append("# HELP iqstream_connection_timeouts_total Connections ended by a connection timer, by kind.\n");
        sb.append("# TYPE iqstream_connection_timeouts_total counter\n");
        sb.append("iqstream_connection_timeouts_total{kind=\"header\"} ").append(headerTimeouts.sum()).append('\n');
        sb.append("iqstream_connection_timeouts_total{kind=\"body\"} ").append(bodyTimeouts.sum()).append('\n');
        sb.append("iqstream_connection_timeouts_total{kind=\"idle\"} ").append(idleTimeouts.sum()).append('\n');
        counter(sb, "iqstream_tombstones_evicted_total",
                "Tombstones of expired runs forgotten early because their memory share was full (such an id"
                + " answers 404 and may be reused).", tombstonesEvicted.sum());
        sb.append("# HELP iqstream_refusals_total Requests refused, by reason.\n");
        sb.append("# TYPE iqstream_refusals_total counter\n");
        for (Refusal r : Refusal.values()) {
            sb.append("iqstream_refusals_total{reason=\"").append(r.label()).append("\"} ")
                    .append(refusals.get(r).sum()).append('\n');
        }
        sb.append("# HELP iqstream_demo_refusals_total Demo runs not created (POST /demo/api/runs answered 429 or"
                + " 503), by reason.\n");
        sb.append("# TYPE iqstream_demo_refusals_total counter\n");
        for (DemoRefusal r : DemoRefusal.values()) {
            sb.append("iqstream_demo_refusals_total{reason=\"").append(r.label()).append("\"} ")
                    .append(demoRefusals.get(r).sum()).append('\n');
        }
        gauge(sb, "iqstream_demo_runs", "Demo runs held (playing, or ended and kept for --demo-retention).",
                demoRunsHeld.sum());
        gauge(sb, "iqstream_demo_reserved_bytes", "Bytes reserved by the demo runs held, against the demo's share"
                + " of the memory budget.", demoBytesHeld.sum());
        counter(sb, "iqstream_demo_runs_failed_total", "Demo runs whose publish failed after their first event.",
                demoRunsFailed.sum());
        gauge(sb, "iqstream_memory_used_bytes", "Bytes committed to event logs and reservations.",
                budget.committedBytes());
        gauge(sb, "iqstream_memory_budget_bytes", "Memory budget for event logs.", budget.budgetBytes());
        gauge(sb, "iqstream_memory_copies_bytes", "Of the memory used, bytes charged for unpacked copies of packed"
                + " log segments (one per segment that resumers read, and each live run's newest packed segment for"
                + " 2 s); at most a quarter of the budget.", budget.copyBytes());
        gauge(sb, "iqstream_memory_heap_bytes", "Of the memory used, bytes charged for what clients make the server"
                + " keep on the heap (durable streams' bookkeeping, paths, Stream-Seq, producers).", budget.heapBytes());
        gauge(sb, "iqstream_memory_heap_share_bytes", "The most iqstream_memory_heap_bytes may reach (a quarter of the"
                + " heap).", budget.heapShareBytes());
        gauge(sb, "iqstream_expected_run_bytes", "Learned size reserved for each new run.",
                budget.expectedRunBytes());
        gauge(sb, "iqstream_direct_memory_used_bytes",
                "Direct memory held by the buffer pool (event logs, unpacked copies, socket buffers, slack).",
                PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory());
        gauge(sb, "iqstream_direct_memory_active_bytes",
                "Direct memory of the buffer pool's chunks in use (buffers live or in a thread's cache), to the page.",
                directActiveBytes());
        gauge(sb, "iqstream_draining", "1 while draining after SIGTERM.", draining ? 1 : 0);
        relayLatency.render(sb);
        resumeLatency.render(sb);
        resumeAcceptToHead.render(sb);
        if (clustered) {
            cluster.render(sb);
        }
        return sb.toString();
    }

    /**
     * The bytes of the pool's direct chunks in use, over its arenas' chunks (each chunk list copied under its
     * arena's lock: a scrape's cost, not the hot path's), to the page: finer than {@code usedDirectMemory}, which
     * counts whole chunks. Buffers above the chunk size (unpooled) are not in it.
     */
    private static long directActiveBytes() {
        long active = 0;
        for (PoolArenaMetric arena : PooledByteBufAllocator.DEFAULT.metric().directArenas()) {
            for (PoolChunkListMetric list : arena.chunkLists()) {
                for (PoolChunkMetric chunk : list) {
                    active += chunk.chunkSize() - chunk.freeBytes();
                }
            }
        }
        return active;
    }

    /** Appends one Prometheus gauge (HELP, TYPE, value); shared by every part that renders metrics. */
    public static void gauge(StringBuilder sb, String name, String help, long value) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(" gauge\n");
        sb.append(name).append(' ').append(value).append('\n');
    }

    /** Appends one Prometheus counter (HELP, TYPE, value); shared by every part that renders metrics. */
    public static void counter(StringBuilder sb, String name, String help, long value) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(" counter\n");
        sb.append(name).append(' ').append(value).append('\n');
    }
}
