package io.iqstream.server.run;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.function.Predicate;

/**
 * One worker's runs grouped by the {@code threadId} of their {@code RUN_STARTED} event: what
 * {@code GET /v1/threads/{threadId}/runs} gathers from every worker (a thread's runs may live on several, since a
 * run's worker is chosen by its run id).
 *
 * <p>Confined to its worker's event loop, like its {@link RunRegistry}.
 *
 * <p>Memory: each indexed run is charged {@link #bytesFor} to the memory budget when it is indexed and given back
 * when the run is dropped (retention passed, or DELETE of an ended run). When the budget cannot take that charge
 * the RUN_STARTED event is refused like any event over budget (503 {@code over_budget}).
 *
 * <p>Only a run's first event is looked at: AG-UI requires {@code RUN_STARTED} to open a run, and reading one event
 * per run keeps the publish path free of JSON parsing.
 */
public final class ThreadIndex {
    /** Longest thread id indexed (characters); a longer one leaves the run out of the index. */
    public static final int MAX_THREAD_ID_CHARS = 256;
    /**
     * Most held runs of one thread on one worker: a further RUN_STARTED of the thread is refused 409
     * {@code thread_full} until ended runs are dropped (DELETE, or retention), so one thread cannot make a
     * listing, or the index, unbounded.
     */
    public static final int MAX_RUNS_PER_THREAD = 1000;
    /** Fixed cost of one indexed run: the map entry or list slot and the run's index fields. */
    static final long ENTRY_BYTES = 96;

    private static final JsonFactory JSON = new JsonFactory();

    private final MemoryBudget budget;
    private final HashMap<String, ArrayList<Run>> threads = new HashMap<>();
    private long chargedBytes;

    public ThreadIndex(MemoryBudget budget) {
        this.budget = budget;
    }

    /** What one indexed run costs: the fixed entry and the thread id's characters. */
    public static long bytesFor(String threadId) {
        return ENTRY_BYTES + 2L * threadId.length();
    }

    /**
     * The {@code threadId} of {@code json} when it is a {@code RUN_STARTED} event with a string {@code threadId} of
     * 1 to {@value #MAX_THREAD_ID_CHARS} characters; null otherwise (or when it is not readable JSON). Reads the
     * top-level fields only; does not move the buffer's indices.
     */
    public static String threadIdOfRunStarted(ByteBuf json) {
        String type = null;
        String threadId = null;
        // streamed from a duplicate: no copy of the event, and the caller's indices stay as they are
        try (JsonParser p = JSON.createParser((java.io.InputStream) new ByteBufInputStream(json.duplicate()))) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (value == JsonToken.VALUE_STRING && name.equals("type")) {
                    type = p.getText();
                } else if (value == JsonToken.VALUE_STRING && name.equals("threadId")) {
                    threadId = p.getText();
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            return null;
        }
        if (!"RUN_STARTED".equals(type) || threadId == null || threadId.isEmpty()
                || threadId.length() > MAX_THREAD_ID_CHARS) {
            return null;
        }
        return threadId;
    }

    /** Charges the budget for indexing a run under {@code threadId}; false when it cannot take it. */
    boolean charge(String threadId, long runBytes) {
        long bytes = bytesFor(threadId);
        if (!budget.charge(bytes, runBytes)) {
            return false;
        }
        chargedBytes += bytes;
        return true;
    }

    /**
     * Indexes {@code run} (already charged with {@link #charge}) under {@code threadId}, after its earlier runs;
     * {@code startedAtMicros} is its {@link StartClock} stamp.
     */
    void add(String threadId, Run run, long startedAtMicros) {
        run.indexed(threadId, startedAtMicros);
        threads.computeIfAbsent(threadId, k -> new ArrayList<>(2)).add(run);
    }

    /**
     * Indexes a run recovered from its file at start under {@code threadId}, with its start stamp as it was;
     * {@code bytes} ({@link #bytesFor}) already charged. Keeps the thread's runs in listing order.
     */
    void restore(String threadId, Run run, long startedAtMicros, long bytes) {
        run.indexed(threadId, startedAtMicros);
        threads.computeIfAbsent(threadId, k -> new ArrayList<>(2)).add(run);
        chargedBytes += bytes;
    }

    /** Takes a dropped run out of the index and gives its charge back. */
    void remove(Run run) {
        String threadId = run.threadId();
        if (threadId == null) {
            return;
        }
        ArrayList<Run> runs = threads.get(threadId);
        if (runs != null && runs.remove(run)) {
            if (runs.isEmpty()) {
                threads.remove(threadId);
            }
            long bytes = bytesFor(threadId);
            chargedBytes -= bytes;
            budget.release(bytes);
        }
    }

    /** Whether {@code threadId} already holds {@link #MAX_RUNS_PER_THREAD} runs on this worker. */
    boolean isFull(String threadId) {
        ArrayList<Run> runs = threads.get(threadId);
        return runs != null && runs.size() >= MAX_RUNS_PER_THREAD;
    }

    /**
     * One page of the thread's runs held by this worker, as immutable snapshots in listing order
     * ({@link ThreadRun#ORDER}): those after {@code after} (null: from the first) that {@code visible} accepts, at
     * most {@code max}. Work and garbage are bounded by {@link #MAX_RUNS_PER_THREAD} and {@code max}.
     */
    public List<ThreadRun> runsOf(String threadId, ThreadRun.Cursor after, int max, Predicate<String> visible) {
        ArrayList<Run> runs = threads.get(threadId);
        if (runs == null) {
            return List.of();
        }
        List<ThreadRun> out = new ArrayList<>(runs.size());
        for (Run r : runs) {
            if ((after == null || after.isBefore(r.startedAtMicros(), r.id())) && visible.test(r.id())) {
                out.add(new ThreadRun(r.id(), r.isEnded(), r.lastEventId(), r.startedAtMicros(), r.endedAtMs()));
            }
        }
        out.sort(ThreadRun.ORDER);
        return out.size() > max ? List.copyOf(out.subList(0, max)) : out;
    }

    /** Bytes this index holds charged to the budget now. */
    public long chargedBytes() {
        return chargedBytes;
    }

    /** Threads with at least one held run on this worker. */
    public int threadCount() {
        return threads.size();
    }
}
