package io.iqstream.server.sse;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The subscribers of one worker loop that are behind their run's tail (a resume, a reader that fell behind), served
 * in turns: one task per loop turn writes at most {@value #BYTES_PER_TURN} bytes of history in all, at most
 * {@link SubscriberStream#CATCH_UP_BYTES_PER_TURN} to one stream per visit, round-robin, and yields to the next
 * turn (a task scheduled with no delay runs after that turn's I/O). So what catching up costs a turn does not grow
 * with the number of streams catching up: a thousand new readers of a long run share the worker with every other
 * connection instead of holding it ({@code HostileFloodTest}); a lone resume still gets the whole share per turn.
 *
 * <p>One per loop thread (a {@link FastThreadLocal}, as Netty keeps its own per-loop caches), confined to it. A
 * stream is queued at most once; one that becomes unwritable or ends leaves the queue at its next visit.
 */
final class CatchUpTurns {
    /** History written per loop turn by all the loop's streams together. */
    static final int BYTES_PER_TURN = 128 * 1024;

    /** Visits past one per waiting stream in a turn (a lone resume takes the turn's bytes in several visits). */
    private static final int MAX_REVISITS_PER_TURN = 64;
    private static final FastThreadLocal<CatchUpTurns> PER_LOOP = new FastThreadLocal<>();

    private final EventExecutor loop;
    private final ArrayDeque<SubscriberStream> waiting = new ArrayDeque<>();
    private final Runnable turn = this::turn;
    private boolean scheduled;

    private CatchUpTurns(EventExecutor loop) {
        this.loop = loop;
    }

    /** The turns of the loop running this thread, {@code loop}. */
    static CatchUpTurns of(EventExecutor loop) {
        CatchUpTurns turns = PER_LOOP.get();
        if (turns == null || turns.loop != loop) {
            turns = new CatchUpTurns(loop);
            PER_LOOP.set(turns);
        }
        return turns;
    }

    /** Queues {@code stream} (not already queued) for a share of a coming turn. */
    void add(SubscriberStream stream) {
        waiting.add(stream);
        if (!scheduled) {
            scheduled = true;
            loop.schedule(turn, 0, TimeUnit.NANOSECONDS);
        }
    }

    private void turn() {
        scheduled = false;
        int bytesLeft = BYTES_PER_TURN;
        // a stream served re-queues itself at the tail when it has more: each visit writes at least one slice
        int visits = waiting.size() + MAX_REVISITS_PER_TURN;
        while (bytesLeft > 0 && visits-- > 0) {
            SubscriberStream stream = waiting.poll();
            if (stream == null) {
                break;
            }
            bytesLeft -= stream.catchUp(Math.min(bytesLeft, SubscriberStream.CATCH_UP_BYTES_PER_TURN));
        }
        if (!waiting.isEmpty() && !scheduled) {
            scheduled = true;
            loop.schedule(turn, 0, TimeUnit.NANOSECONDS);
        }
    }
}
