package io.iqstream.client;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Streams one run into IQ-Stream over one HTTP request: {@code POST /v1/runs/{runId}/events}
 * with a chunked {@code application/x-ndjson} body that carries each event the moment {@link
 * #send} is called. {@link #finish} (or {@link #close}) ends the body and returns the server's
 * reply.
 *
 * <p>Implementation notes. Invariant: every event passed to {@code send} is appended to the run
 * exactly once, in order. The publisher keeps the events of the current request until the server
 * confirms them. If the request breaks (connection reset, proxy cut, 5xx), it asks the server how
 * many events the run holds ({@code GET /v1/runs/{runId}}), drops the ones the server already
 * has, and continues the same run over a new request that starts with the rest: a new request
 * appends, so nothing is duplicated or lost. It tries {@code maxRetries} times in a row with a
 * doubling delay; then {@link IqStreamException}. Recovery starts as soon as the break is seen
 * (on a background virtual thread) so that the server's --publisher-timeout does not expire
 * while the model is quiet.
 *
 * <p>Every request carries {@code Last-Event-ID}: the run's event count this publisher believes
 * the request starts at. If it holds another count (someone else appended), the server answers 409
 * {@code event_id_mismatch} with the actual id, which fails the publisher with {@link
 * IqStreamHttpException} ({@link IqStreamHttpException#errorCode()}).
 *
 * <p><b>Restore.</b> A publisher that wrote the run from its first event keeps every event line it
 * sent until the run ends (the same arrays as the unconfirmed ones, no copy; at most {@link
 * IqStreamClient.Builder#restoreBuffer}, 8 MiB by default). If the node that held the run dies
 * (no node holds it any more: the status is 404, or a request is answered 409 {@code run_lost}),
 * it restores the run on its new owner: one request with {@code X-IQStream-Restore: N} (N = the
 * events it sent) and {@code Last-Event-ID: 0} whose body resends events 1..N (so they get the
 * same ids) and then goes on with new ones. Readers that resume with {@code Last-Event-ID} wait
 * for the restore and get exactly the rest. A publisher that joined a run someone else began, or
 * whose events passed the cap, cannot restore: it fails with 409 {@code run_lost}, and the run is
 * never silently restarted at id 1.
 *
 * <p>Refusals a retry cannot fix (400 bad event, 401, 403, 409 run_ended, 413 ...) fail the
 * publisher with {@link IqStreamHttpException}: the next {@code send} or {@code finish} throws
 * it. Events before a refused event stay in the run (the server's rule).
 *
 * <p>A stop ({@code DELETE /v1/runs/{runId}} by anyone with the publish right, e.g. a user's stop
 * button) is its own outcome: the server answers the open request 409 {@code run_stopped} at once,
 * {@link #stopped()} turns true, and the next {@code send} or {@code finish} throws {@link
 * RunStoppedException}. Abort the agent producing the run.
 *
 * <p>Thread model: any thread may call it; calls are serialised by a lock, and events are
 * appended in the order their {@code send} calls return. {@code send} blocks only while a broken
 * request is being replaced.
 */
public final class RunPublisher implements AutoCloseable {
  private final IqStreamClient client;
  private final String runId;
  private final ReentrantLock lock = new ReentrantLock();
  /** Event lines of the current request that the server has not confirmed yet. */
  private final ArrayList<byte[]> unconfirmed = new ArrayList<>();
  /**
   * Every event line of the run since its first event, kept to restore it on a new node if its
   * node dies; null when this publisher cannot restore (it joined a run begun elsewhere, or the
   * lines passed the client's restore buffer).
   */
  private ArrayList<byte[]> kept;
  private long keptBytes;
  private int restores;
  /** The run's event count when the current request began. */
  private long baseEventCount;
  private EventBodyPublisher body;
  private CompletableFuture<HttpResponse<String>> response;
  private int requestsStarted;
  private int failuresInRow;
  /**
   * A request broke (no HTTP answer) after events were written, and no status has confirmed the
   * count since: the run may hold events this publisher cannot count.
   */
  private boolean mayHaveEvents;
  private long eventsSent;
  private boolean completing;
  private PublishResult result;
  private RuntimeException failure;

  RunPublisher(IqStreamClient client, String runId) {
    this.client = client;
    this.runId = runId;
    RunStatus status = client.status(runId).orElse(null);
    if (status != null && status.ended()) {
      throw new IqStreamHttpException(runId, 409, "run_ended", "the run has already ended", 0, null);
    }
    this.baseEventCount = status == null ? 0 : status.events();
    this.kept = baseEventCount == 0 && client.restoreBufferBytes() > 0 ? new ArrayList<>() : null;
    lock.lock();
    try {
      startRequest(baseEventCount);
    } finally {
      lock.unlock();
    }
  }

  /**
   * True once the run is known to be stopped ({@code DELETE}): abort the agent; {@code send} and
   * {@code finish} now throw {@link RunStoppedException}. Java's HTTP client reads an answer only
   * after the request body ends, so while the request is open this asks the server (one {@code GET
   * /v1/runs/{runId}}, and one read of its last event if it has ended): call it between events or
   * on a timer, not for every token.
   */
  public boolean stopped() {
    lock.lock();
    try {
      if (failure == null && result == null) {
        RunStatus status = client.status(runId).orElse(null);
        if (status != null && status.ended() && endedByStop(status.events())) {
          fail(new RunStoppedException(runId, "run " + runId + " was stopped (DELETE)", 0, status.events()));
        }
      }
      return failure instanceof RunStoppedException;
    } catch (IqStreamException e) {
      return failure instanceof RunStoppedException; // the server could not be asked now
    } finally {
      lock.unlock();
    }
  }

  /** The run this publisher writes to. */
  public String runId() {
    return runId;
  }

  /** Events passed to {@link #send} so far. */
  public long eventsSent() {
    lock.lock();
    try {
      return eventsSent;
    } finally {
      lock.unlock();
    }
  }

  /** Times this publisher restored its run on a new node after the one holding it was lost. */
  public int restores() {
    lock.lock();
    try {
      return restores;
    } finally {
      lock.unlock();
    }
  }

  /** HTTP requests this publisher has used (1 unless a broken request was replaced). */
  public int requestsStarted() {
    lock.lock();
    try {
      return requestsStarted;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Sends one event now. A {@link CharSequence} or {@code byte[]} is JSON text (one object with a
   * string "type"); anything else (a Map, a record, a Jackson node) is written by the client's
   * ObjectMapper.
   *
   * @throws IllegalArgumentException if the event is not a JSON object
   * @throws IqStreamHttpException if the server refused this run's publish
   * @throws IqStreamException if the connection could not be restored
   * @throws IllegalStateException after {@link #finish}
   */
  public RunPublisher send(Object event) {
    byte[] line = client.eventLine(event);
    lock.lock();
    try {
      ensureOpen();
      checkResponse();
      unconfirmed.add(line);
      keep(line);
      eventsSent++;
      body.offer(line); // if the request just broke, the line is resent by the recovery
      return this;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Ends the request body, waits for the server's reply and returns it. Idempotent. A break
   * while finishing is recovered like one while sending.
   */
  public PublishResult finish() {
    lock.lock();
    try {
      if (result != null) return result;
      ensureOpen();
      completing = true;
      body.complete();
      while (result == null) {
        CompletableFuture<HttpResponse<String>> current = response;
        HttpResponse<String> r = null;
        Throwable error = null;
        try {
          r = current.get();
        } catch (ExecutionException e) {
          error = e.getCause();
        } catch (CancellationException e) {
          error = e;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw fail(new IqStreamException("interrupted while finishing the publish", runId, e));
        }
        if (r != null && r.statusCode() == 200) {
          result = client.parseResult(runId, r.body());
          unconfirmed.clear();
          kept = null;
        } else {
          handleOutcome(r, error);
        }
      }
      return result;
    } finally {
      lock.unlock();
    }
  }

  /** Finishes the publish if it is still open; does nothing after a failure or {@link #abort}. */
  @Override
  public void close() {
    lock.lock();
    try {
      if (result != null || failure != null) return;
    } finally {
      lock.unlock();
    }
    finish();
  }

  /**
   * Breaks the request off without finishing: the server treats it as a lost publisher (after
   * --publisher-timeout it ends the run with RUN_ERROR PUBLISHER_LOST, unless a new publish
   * continues the run).
   */
  public void abort() {
    lock.lock();
    try {
      if (result != null || failure != null) return;
      failure = new IllegalStateException("the publish of run '" + runId + "' was aborted");
      response.cancel(true);
    } finally {
      lock.unlock();
    }
  }

  // ---- internals, all under the lock ----

  private void ensureOpen() {
    if (failure != null) throw failure;
    if (result != null || completing) throw new IllegalStateException("the publish of run '" + runId + "' is finished");
  }

  /** Keeps {@code line} for a restore, or stops keeping once the lines pass the cap. */
  private void keep(byte[] line) {
    if (kept == null) return;
    keptBytes += line.length;
    if (keptBytes > client.restoreBufferBytes()) {
      kept = null; // past the cap: a lost node ends this run as before (run_lost)
    } else {
      kept.add(line);
    }
  }

  private void startRequest(long lastEventId) {
    startRequest(lastEventId, 0);
  }

  /** {@code restoreTo} &gt; 0: a restore of the run's first {@code restoreTo} events (resent first). */
  private void startRequest(long lastEventId, long restoreTo) {
    EventBodyPublisher next = new EventBodyPublisher();
    HttpRequest.Builder b = client.request(client.eventsUri(runId))
        .header("Content-Type", "application/x-ndjson")
        // the last id this publisher believes the run has: the server refuses with 409 run_lost /
        // event_id_mismatch instead of starting a fresh run or appending at the wrong place
        .header("Last-Event-ID", Long.toString(lastEventId));
    if (restoreTo > 0) b.header("X-IQStream-Restore", Long.toString(restoreTo));
    HttpRequest request = b.POST(next).build();
    body = next;
    requestsStarted++;
    CompletableFuture<HttpResponse<String>> future =
        client.http().sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    response = future;
    future.whenComplete((r, e) -> {
      if (e == null && r.statusCode() == 200) return;
      // recover at once: the model may stay quiet longer than the server's publisher timeout
      Thread.ofVirtual().name("iqstream-recover-" + runId).start(() -> recoverInBackground(future));
    });
  }

  private void recoverInBackground(CompletableFuture<HttpResponse<String>> broken) {
    lock.lock();
    try {
      if (response != broken || result != null || failure != null || completing) return;
      checkResponse();
    } catch (RuntimeException e) {
      // kept in `failure`; the next send() or finish() throws it
    } finally {
      lock.unlock();
    }
  }

  /** If the current request is over, deal with how it ended. */
  private void checkResponse() {
    CompletableFuture<HttpResponse<String>> current = response;
    if (!current.isDone()) return;
    HttpResponse<String> r = null;
    Throwable error = null;
    try {
      r = current.join();
    } catch (CompletionException | CancellationException e) {
      error = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
    if (r != null && r.statusCode() == 200) {
      // The server closed our request before we ended it: continue over a new one.
      handleOutcome(null, new IOException("the server ended the publish request early: " + r.body()));
    } else {
      handleOutcome(r, error);
    }
  }

  /** A request ended without a 200: retry what can be retried, fail on the rest. */
  private void handleOutcome(HttpResponse<String> r, Throwable error) {
    if (r != null) {
      IqStreamHttpException refused = client.httpError(runId, r);
      boolean retryable = r.statusCode() >= 500
          || (r.statusCode() == 409 && "publisher_active".equals(refused.errorCode()) && requestsStarted > 1);
      if (r.statusCode() == 409 && "run_lost".equals(refused.errorCode()) && kept != null) {
        restore();
        return;
      }
      if (!retryable) throw fail(refused);
      recover(refused, refused.retryAfter().orElse(Duration.ZERO));
    } else if (error instanceof IOException || error instanceof CancellationException) {
      recover(error, Duration.ZERO);
    } else {
      throw fail(new IqStreamException("publish request failed: " + error, runId, error));
    }
  }

  /**
   * Continues the run over a new request: asks the server how many events it has, drops those
   * from the unconfirmed ones, and resends the rest first.
   */
  private void recover(Throwable cause, Duration minDelay) {
    Throwable last = cause;
    // a transport break after events were written: some may have reached the run (an HTTP answer
    // instead means the server took none past its refusal, and says where it stopped)
    // An IQ-Stream refusal before any event (over_budget, draining: no lastEventId) took none; a
    // break, or an answer from a proxy in between (502/504, no IQ-Stream code), may have.
    if (!unconfirmed.isEmpty() && (!(cause instanceof IqStreamHttpException h)
        || h.errorCode() == null || h.lastEventId() > 0)) {
      mayHaveEvents = true;
    }
    while (true) {
      failuresInRow++;
      if (failuresInRow > client.retry().maxRetries()) {
        throw fail(new IqStreamException(
            "publish of run '" + runId + "' broke and could not be continued after "
                + client.retry().maxRetries() + " attempts: " + last,
            runId, last));
      }
      sleep(max(minDelay, client.retry().delay(failuresInRow)));
      RunStatus status;
      try {
        status = client.status(runId).orElse(null);
      } catch (IqStreamHttpException e) {
        if (e.statusCode() < 500) throw fail(e);
        last = e;
        continue;
      } catch (IqStreamException e) {
        last = e;
        continue;
      }
      if (status != null && status.publishing()) {
        // the server has not seen the old request end yet: its last events may still be
        // arriving, so the count is not final; ask again after the next delay
        last = new IqStreamException("the broken request is still open at the server", runId, cause);
        continue;
      }
      if (status == null && (baseEventCount > 0 || mayHaveEvents) && kept != null) {
        // no node holds the run any more (the status of a lost run is 404 only once every live
        // node said so): restore it from the kept events, then go on
        restore();
        return;
      }
      if (status == null && (baseEventCount > 0 || mayHaveEvents)) {
        // no node holds a run that had (or may have had) events: its node died, or it was
        // dropped. A new request with Last-Event-ID (at least 1) lets the server say so (409
        // run_lost), which fails the publisher; the run is never restarted at id 1.
        startRequest(Math.max(baseEventCount, 1));
        if (completing) body.complete();
        return;
      }
      mayHaveEvents = false;
      long count = status == null ? 0 : status.events();
      long accepted = count - baseEventCount;
      if (status != null && status.ended() && endedByStop(count)) {
        // the server's RUN_ERROR STOPPED follows what it took of ours: nothing more is taken
        throw fail(new RunStoppedException(runId, "run " + runId + " was stopped (DELETE)", 0, count));
      }
      if (accepted < 0 || accepted > unconfirmed.size()) {
        throw fail(new IqStreamException(
            "run '" + runId + "' changed under its publisher: the server holds " + count
                + " events, this request started at " + baseEventCount + " and sent " + unconfirmed.size(),
            runId, cause));
      }
      if (accepted > 0) failuresInRow = 0; // the broken request did deliver: progress
      unconfirmed.subList(0, (int) accepted).clear();
      baseEventCount = count;
      if (status != null && status.ended()) {
        if (unconfirmed.isEmpty()) { // our last event was the terminal one, and it arrived
          result = new PublishResult(runId, count, true);
          return;
        }
        throw fail(new IqStreamHttpException(runId, 409, "run_ended",
            "the run ended while its publisher reconnected (" + unconfirmed.size() + " events not appended)", 0, null));
      }
      if (completing && unconfirmed.isEmpty()) {
        result = new PublishResult(runId, count, false);
        return;
      }
      startRequest(baseEventCount);
      for (byte[] line : unconfirmed) body.offer(line);
      if (completing) body.complete();
      return;
    }
  }

  /**
   * Restores the run on its new owner: a request with {@code X-IQStream-Restore} that resends every
   * kept event from id 1 (the same ids), then carries the new ones.
   */
  private void restore() {
    restores++;
    mayHaveEvents = false;
    baseEventCount = 0;
    unconfirmed.clear();
    unconfirmed.addAll(kept);
    startRequest(0, kept.size());
    for (byte[] line : unconfirmed) body.offer(line);
    if (completing) body.complete();
  }

  /** Whether the ended run's last event is the server's stop; false when that cannot be read now. */
  private boolean endedByStop(long events) {
    try {
      return client.endedByStop(runId, events);
    } catch (IqStreamException e) {
      return false;
    }
  }

  private RuntimeException fail(RuntimeException e) {
    if (failure == null) failure = e;
    if (response != null && !response.isDone()) response.cancel(true);
    return e;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw fail(new IqStreamException("interrupted while reconnecting", runId, e));
    }
  }
}
