package io.iqstream.client;

import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.Flow;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The body of one streamed publish request: a {@link HttpRequest.BodyPublisher} of unknown
 * length (so java.net.http sends it chunked) into which {@link #offer} puts one NDJSON line per
 * event, handed to the HTTP client as soon as it asks for data.
 *
 * <p>Thread model: {@link #offer} and {@link #complete} are called by the publishing thread;
 * {@code request(n)} and {@code cancel()} by the HTTP client's threads. A small lock guards the
 * queue and demand; items are delivered outside of it. Not repeatable: a second subscription is
 * refused (java.net.http does not retry a POST by itself).
 *
 * <p>When the HTTP client cancels (the connection broke, or the server answered early) further
 * offers are dropped; the caller learns of it from the response future and keeps its own copy of
 * every event until the server confirms it.
 */
final class EventBodyPublisher implements HttpRequest.BodyPublisher {
  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>();
  private Flow.Subscriber<? super ByteBuffer> subscriber;
  private long demand;
  private boolean completed;
  private boolean terminated;
  private boolean cancelled;
  private boolean draining;

  @Override
  public long contentLength() {
    return -1; // unknown: chunked transfer encoding
  }

  @Override
  public void subscribe(Flow.Subscriber<? super ByteBuffer> s) {
    lock.lock();
    try {
      if (subscriber != null) {
        s.onSubscribe(new Flow.Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {}
        });
        s.onError(new IllegalStateException("a streamed publish body can be sent only once"));
        return;
      }
      subscriber = s;
    } finally {
      lock.unlock();
    }
    s.onSubscribe(new Flow.Subscription() {
      @Override
      public void request(long n) {
        if (n <= 0) {
          fail(new IllegalArgumentException("request(" + n + ")"));
          return;
        }
        lock.lock();
        try {
          demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
        } finally {
          lock.unlock();
        }
        drain();
      }

      @Override
      public void cancel() {
        lock.lock();
        try {
          cancelled = true;
          queue.clear();
        } finally {
          lock.unlock();
        }
      }
    });
    drain();
  }

  /** Queues one event line; returns false if the request is already over (cancelled). */
  boolean offer(byte[] line) {
    lock.lock();
    try {
      if (cancelled || completed) return false;
      queue.add(ByteBuffer.wrap(line));
    } finally {
      lock.unlock();
    }
    drain();
    return true;
  }

  /** Ends the body once every queued line has been handed over. */
  void complete() {
    lock.lock();
    try {
      completed = true;
    } finally {
      lock.unlock();
    }
    drain();
  }

  /** Whether the HTTP client stopped taking data (connection broke or the server answered). */
  boolean isCancelled() {
    lock.lock();
    try {
      return cancelled;
    } finally {
      lock.unlock();
    }
  }

  private void fail(Throwable error) {
    Flow.Subscriber<? super ByteBuffer> s;
    lock.lock();
    try {
      if (terminated) return;
      terminated = true;
      cancelled = true;
      queue.clear();
      s = subscriber;
    } finally {
      lock.unlock();
    }
    if (s != null) s.onError(error);
  }

  /** Delivers queued lines while there is demand; one thread at a time, in order. */
  private void drain() {
    Flow.Subscriber<? super ByteBuffer> s;
    lock.lock();
    try {
      if (draining || subscriber == null) return;
      draining = true;
      s = subscriber;
    } finally {
      lock.unlock();
    }
    while (true) {
      ByteBuffer next = null;
      boolean finish = false;
      lock.lock();
      try {
        if (cancelled || terminated) {
          draining = false;
          return;
        }
        if (demand > 0 && !queue.isEmpty()) {
          next = queue.poll();
          demand--;
        } else if (queue.isEmpty() && completed) {
          terminated = true;
          finish = true;
        } else {
          draining = false;
          return;
        }
      } finally {
        lock.unlock();
      }
      if (finish) {
        s.onComplete();
        lock.lock();
        try {
          draining = false;
        } finally {
          lock.unlock();
        }
        return;
      }
      s.onNext(next);
    }
  }
}
