package io.iqstream.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/** Reads a run's SSE stream in the background, collecting (id, data) pairs. */
final class SseSubscriber implements AutoCloseable {
  record Event(long id, String data) {}

  final List<Event> events = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> done;

  SseSubscriber(URI base, String runId, String token) {
    this(base, runId, token, 0);
  }

  /** A reader that resumes after {@code lastEventId} (0: from the start). */
  SseSubscriber(URI base, String runId, String token, long lastEventId) {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/runs/" + runId + "/events"))
        .header("Authorization", "Bearer " + token)
        .header("Accept", "text/event-stream");
    if (lastEventId > 0) b.header("Last-Event-ID", Long.toString(lastEventId));
    HttpRequest request = b.build();
    done = http.sendAsync(request, HttpResponse.BodyHandlers.ofLines()).thenAccept(response -> {
      if (response.statusCode() != 200) throw new IllegalStateException("subscribe answered " + response.statusCode());
      long[] id = {0};
      response.body().forEach(line -> {
        if (line.startsWith("id: ")) {
          id[0] = Long.parseLong(line.substring(4));
        } else if (line.startsWith("data: ")) {
          events.add(new Event(id[0], line.substring(6)));
        }
      });
    });
  }

  /** Waits until at least {@code count} events arrived. */
  void awaitEvents(int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (events.size() < count) {
      if (done.isCompletedExceptionally()) done.join();
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + count + " events, got " + events.size());
      }
      Thread.sleep(5);
    }
  }

  /** Waits for the stream to end (the run's terminal event). */
  void awaitEnd(Duration timeout) throws Exception {
    done.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    done.cancel(true);
  }
}
