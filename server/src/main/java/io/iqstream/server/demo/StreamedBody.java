package io.iqstream.server.demo;

import java.nio.ByteBuffer;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A request body written while the request is under way: each {@link #offer} becomes a chunk the moment
 * the HTTP client asks for more, {@link #complete} ends the body. Used by {@link RunSimulator} to stream
 * one NDJSON line per event, as an agent backend does.
 *
 * <p>Any thread may offer and complete; delivery to the subscriber is serialized by a work-in-progress
 * counter. Nothing is dropped or blocks: the queue holds what the client has not asked for yet (a few
 * events at most, since the client asks as the socket drains). A second subscription is refused, since
 * the events cannot be produced twice.
 */
final class StreamedBody implements Flow.Publisher<ByteBuffer> {
    private final Queue<ByteBuffer> queue = new ConcurrentLinkedQueue<>();
    private final AtomicLong demand = new AtomicLong();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicBoolean subscribed = new AtomicBoolean();
    private volatile Flow.Subscriber<? super ByteBuffer> subscriber;
    private volatile boolean completed;
    private volatile boolean cancelled;
    private boolean done;

    /** Queues bytes to send; ignored once cancelled. */
    void offer(ByteBuffer bytes) {
        if (!cancelled) {
            queue.add(bytes);
            drain();
        }
    }

    /** Ends the body after what was offered so far. */
    void complete() {
        completed = true;
        drain();
    }

    /** True when the HTTP client gave up on the body (the request failed or was aborted). */
    boolean isCancelled() {
        return cancelled;
    }

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> s) {
        if (!subscribed.compareAndSet(false, true)) {
            s.onSubscribe(new Flow.Subscription() {
                @Override
                public void request(long n) {}

                @Override
                public void cancel() {}
            });
            s.onError(new IllegalStateException("a streamed run body can be sent only once"));
            return;
        }
        subscriber = s;
        s.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
                if (n <= 0) {
                    cancelled = true;
                    s.onError(new IllegalArgumentException("request(" + n + ")"));
                    return;
                }
                demand.getAndAccumulate(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
                drain();
            }

            @Override
            public void cancel() {
                cancelled = true;
                queue.clear();
            }
        });
        drain();
    }

    private void drain() {
        Flow.Subscriber<? super ByteBuffer> s = subscriber;
        if (s == null || wip.getAndIncrement() != 0) {
            return;
        }
        do {
            while (!cancelled && demand.get() > 0) {
                ByteBuffer next = queue.poll();
                if (next == null) {
                    break;
                }
                demand.decrementAndGet();
                s.onNext(next);
            }
            if (!done && !cancelled && completed && queue.isEmpty()) {
                done = true;
                s.onComplete();
            }
        } while (wip.decrementAndGet() != 0);
    }
}
