package io.iqstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A node's death loses nothing while the producer lives (issue 34): two real server processes with
 * --peers; the node that holds a run being published is SIGKILLed mid-run; the publisher restores
 * the run on the surviving node with the same event ids and goes on; a reader that resumes with
 * Last-Event-ID through the survivor, before the restore, waits for it and gets exactly the rest.
 */
class RunPublisherRestoreTest {
  private static final String CLUSTER_SECRET = "client-test-cluster-secret-0123456789abcdef";
  private static final Duration WAIT = Duration.ofSeconds(30);

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static ServerProcess node(String secret, int port, String peers) throws Exception {
    return ServerProcess.startWithSecret(secret, "--port", String.valueOf(port), "--peers", peers,
        "--advertise", "127.0.0.1:" + port, "--cluster-secret", CLUSTER_SECRET, "--await-run", "15s");
  }

  /** A metric of the node at {@code port} (the first line starting with {@code name}), -1 if unreadable. */
  private static double metric(int port, String name) {
    try {
      HttpResponse<String> r = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString());
      for (String line : r.body().split("\n")) {
        if (line.startsWith(name + " ")) return Double.parseDouble(line.substring(name.length() + 1).trim());
      }
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return -1;
  }

  private static void awaitCondition(String what, java.util.function.BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
      Thread.sleep(50); // polling a condition, bounded by the deadline
    }
  }

  @Test
  void restoresItsRunOnTheSurvivorWhenTheNodeHoldingItIsKilled() throws Exception {
    int pa = freePort();
    int pb = freePort();
    String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
    ServerProcess a = ServerProcess.start("--port", String.valueOf(pa), "--peers", peers,
        "--advertise", "127.0.0.1:" + pa, "--cluster-secret", CLUSTER_SECRET, "--await-run", "15s");
    ServerProcess b = node(a.secret, pb, peers);
    List<ServerProcess> alive = new ArrayList<>(List.of(a, b));
    String runId = "restore-" + UUID.randomUUID();
    try (TcpProxy balancer = new TcpProxy(pa)) {
      awaitCondition("both nodes ready with two members", () ->
          metric(pa, "iqstream_cluster_members{state=\"ready\"}") == 2
              && metric(pb, "iqstream_cluster_members{state=\"ready\"}") == 2);
      IqStreamClient client = a.client(balancer.baseUri(), a.publishToken());
      RunPublisher run = client.openRun(runId);
      run.send(AgUiEvents.runStarted("t", runId));
      run.send(AgUiEvents.textMessageStart("m1"));
      for (int i = 0; i < 10; i++) run.send(AgUiEvents.textMessageContent("m1", "token-" + i + " "));
      try (SseSubscriber first = new SseSubscriber(URI.create("http://127.0.0.1:" + pa), runId, a.publishToken())) {
        first.awaitEvents(12, WAIT);
      }
      // the node that holds the run dies; the balancer sends everything to the survivor from now on
      boolean onA = metric(pa, "iqstream_runs_active") == 1;
      assertTrue(onA ^ metric(pb, "iqstream_runs_active") == 1, "exactly one node holds the run");
      ServerProcess holder = onA ? a : b;
      int survivor = onA ? pb : pa;
      balancer.retarget(survivor);
      holder.kill();
      alive.remove(holder);
      balancer.cut();
      // a reader that had 12 events resumes through the survivor before the publisher restores the run
      try (SseSubscriber resumed = new SseSubscriber(URI.create("http://127.0.0.1:" + survivor), runId,
          a.publishToken(), 12)) {
        for (int i = 10; i < 20; i++) {
          run.send(AgUiEvents.textMessageContent("m1", "token-" + i + " "));
          Thread.sleep(50); // pacing the model's output, not a wait for a condition
        }
        run.send(AgUiEvents.textMessageEnd("m1"));
        run.send(AgUiEvents.runFinished("t", runId));
        PublishResult result = run.finish();
        assertEquals(24, result.lastEventId(), "every event once, the restored ones with their ids");
        assertEquals(1, run.restores(), "the run was restored once");
        resumed.awaitEnd(WAIT);
        List<Long> ids = new ArrayList<>();
        for (SseSubscriber.Event e : resumed.events) ids.add(e.id());
        List<Long> rest = new ArrayList<>();
        for (long id = 13; id <= 24; id++) rest.add(id);
        assertEquals(rest, ids, "the resumed reader got exactly the rest, in order");
        assertTrue(resumed.events.get(0).data().contains("\"token-10 \""),
            "event 13 is the first the producer sent after the kill: " + resumed.events.get(0).data());
      }
      assertEquals(1, metric(survivor, "iqstream_cluster_restores_total"), "the survivor counts the restore");
    } finally {
      for (ServerProcess p : alive) p.close();
    }
  }
}
