package io.iqstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The publisher against the real server process (and a TCP proxy the test can cut). */
class RunPublisherTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(10);

  private static ServerProcess server;
  private static TcpProxy proxy;

  @BeforeAll
  static void startServer() throws Exception {
    server = ServerProcess.start("--publisher-timeout", "10s", "--max-event-bytes", "4k");
    proxy = new TcpProxy(server.port);
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (proxy != null) proxy.close();
    if (server != null) server.close();
  }

  private static String newRunId() {
    return "run-" + UUID.randomUUID();
  }

  private static Map<String, Object> content(String messageId, int seq) {
    return AgUiEvents.textMessageContent(messageId, "token-" + seq + " ");
  }

  @Test
  void streamsEachEventOverOneRequestTheMomentItIsSent() throws Exception {
    String runId = newRunId();
    IqStreamClient client = server.client(proxy.baseUri(), server.publishToken());
    int postsBefore = proxy.posts();
    try (SseSubscriber browser = new SseSubscriber(server.baseUri, runId, server.publishToken());
        RunPublisher run = client.openRun(runId)) {
      run.send(AgUiEvents.runStarted("t1", runId));
      run.send(AgUiEvents.textMessageStart("m1"));
      // both arrive while the request is still open: nothing waits for the end of the body
      browser.awaitEvents(2, WAIT);
      assertEquals("RUN_STARTED", JSON.readTree(browser.events.get(0).data()).get("type").asText());
      for (int i = 0; i < 50; i++) {
        run.send(content("m1", i));
        browser.awaitEvents(3 + i, WAIT); // each event is delivered before the next is sent
      }
      run.send(AgUiEvents.textMessageEnd("m1"));
      run.send(AgUiEvents.runFinished("t1", runId));
      PublishResult result = run.finish();
      assertEquals(new PublishResult(runId, 54, true), result);
      assertEquals(1, run.requestsStarted());
      browser.awaitEnd(WAIT);
      assertEquals(54, browser.events.size());
      for (int i = 0; i < 54; i++) assertEquals(i + 1, browser.events.get(i).id());
    }
    assertEquals(1, proxy.posts() - postsBefore, "one POST carried the whole run");
    RunStatus status = client.status(runId).orElseThrow();
    assertEquals(54, status.events());
    assertTrue(status.ended());
  }

  record ToolResult(String type, String messageId, String toolCallId, String content, String role) {}

  @Test
  void sendsJsonStringsMapsRecordsAndJsonNodes() throws Exception {
    String runId = newRunId();
    IqStreamClient client = server.client(server.baseUri, server.publishToken());
    List<String> expected = new ArrayList<>();
    try (SseSubscriber browser = new SseSubscriber(server.baseUri, runId, server.publishToken())) {
      try (RunPublisher run = client.openRun(runId)) {
        run.send("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"" + runId + "\"}");
        expected.add("{\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"" + runId + "\"}");
        run.send("{\n  \"type\": \"CUSTOM\",\n  \"name\": \"pretty\",\n  \"value\": \"a\\nb\"\n}"); // spans lines
        expected.add("{\"type\":\"CUSTOM\",\"name\":\"pretty\",\"value\":\"a\\nb\"}");
        run.send(Map.of("type", "CUSTOM", "name", "map", "value", 1));
        expected.add(JSON.writeValueAsString(Map.of("type", "CUSTOM", "name", "map", "value", 1)));
        run.send(new ToolResult("TOOL_CALL_RESULT", "m2", "tc1", "ünïcödé ✓", "tool"));
        expected.add("{\"type\":\"TOOL_CALL_RESULT\",\"messageId\":\"m2\",\"toolCallId\":\"tc1\","
            + "\"content\":\"ünïcödé ✓\",\"role\":\"tool\"}");
        JsonNode node = JSON.createObjectNode().put("type", "RUN_FINISHED").put("threadId", "t").put("runId", runId);
        run.send(node);
        expected.add(JSON.writeValueAsString(node));
        assertThrows(IllegalArgumentException.class, () -> run.send("[1,2]"));
        assertThrows(IllegalArgumentException.class, () -> run.send("{\n not json"));
      }
      browser.awaitEnd(WAIT);
      List<JsonNode> got = new ArrayList<>();
      for (SseSubscriber.Event e : browser.events) got.add(JSON.readTree(e.data()));
      List<JsonNode> want = new ArrayList<>();
      for (String s : expected) want.add(JSON.readTree(s));
      assertEquals(want, got);
    }
  }

  @Test
  void continuesTheSameRunAfterTheConnectionBreaksWithoutDuplicates() throws Exception {
    String runId = newRunId();
    IqStreamClient client = server.client(proxy.baseUri(), server.publishToken());
    int total = 300;
    try (SseSubscriber browser = new SseSubscriber(server.baseUri, runId, server.publishToken())) {
      RunPublisher run = client.openRun(runId);
      run.send(AgUiEvents.runStarted("t", runId));
      run.send(AgUiEvents.textMessageStart("m1"));
      for (int i = 0; i < total; i++) {
        run.send(content("m1", i));
        if (i == 40) {
          browser.awaitEvents(43, WAIT); // the server has everything so far: a clean cut
          proxy.cut();
        }
        if (i == 150 || i == 151 || i == 240) proxy.cut(); // cuts with events still in flight
      }
      run.send(AgUiEvents.textMessageEnd("m1"));
      run.send(AgUiEvents.runFinished("t", runId));
      PublishResult result = run.finish();

      assertEquals(total + 4, result.lastEventId());
      assertTrue(result.ended());
      assertTrue(run.requestsStarted() >= 2, "a new request continued the run: " + run.requestsStarted());
      browser.awaitEnd(WAIT);
      List<String> deltas = new ArrayList<>();
      for (int i = 0; i < browser.events.size(); i++) {
        assertEquals(i + 1, browser.events.get(i).id());
        JsonNode e = JSON.readTree(browser.events.get(i).data());
        if (e.get("type").asText().equals("TEXT_MESSAGE_CONTENT")) deltas.add(e.get("delta").asText());
      }
      assertEquals(total + 4, browser.events.size());
      for (int i = 0; i < total; i++) assertEquals("token-" + i + " ", deltas.get(i), "event " + i + ": no gap, no duplicate");
    }
  }

  @Test
  void aRunWhoseNodeIsGoneFailsWithRunLostNeverAFreshRunWhenItsEventsWereNotKept() throws Exception {
    // the proxy is later switched to another node with the same key and no runs, as a balancer
    // does when the run's node dies
    String runId = newRunId();
    try (TcpProxy toA = new TcpProxy(server.port)) {
      // restores off (restoreBuffer 0): a publisher that kept no events cannot restore the run
      IqStreamClient client = IqStreamClient.builder(toA.baseUri()).token(server.publishToken())
          .retry(8, Duration.ofMillis(100), Duration.ofSeconds(1)).restoreBuffer(0).build();
      // one streaming request from the run's start: the publisher holds no confirmed count (0)
      RunPublisher run = client.openRun(runId);
      run.send(AgUiEvents.runStarted("t", runId));
      run.send(AgUiEvents.textMessageStart("m1"));
      run.send(content("m1", 0));
      try (SseSubscriber browser = new SseSubscriber(server.baseUri, runId, server.publishToken())) {
        browser.awaitEvents(3, WAIT);
      }
      ServerProcess fresh = ServerProcess.startWithSecret(server.secret);
      try {
        toA.retarget(fresh.port);
        toA.cut();
        IqStreamHttpException lost = assertThrows(IqStreamHttpException.class, () -> {
          long deadline = System.nanoTime() + WAIT.toNanos();
          while (System.nanoTime() < deadline) {
            run.send(content("m1", 1));
            Thread.sleep(50); // pacing the model's output, not a wait for a condition
          }
          run.finish();
        });
        assertEquals(409, lost.statusCode(), lost.getMessage());
        assertEquals("run_lost", lost.errorCode(), lost.getMessage());
        assertTrue(fresh.client(fresh.baseUri, server.publishToken()).status(runId).isEmpty(),
            "no fresh run was started on the node that does not hold it");
      } finally {
        fresh.close();
      }
    }
  }

  @Test
  void refusesBadTokensWith401And403() {
    // 401: a token signed with another key (seen when the run is opened)
    IqStreamClient forged = IqStreamClient.builder(server.baseUri)
        .token(Jwt.hs256("another-secret-another-secret-another", "{\"iqstream\":{\"publish\":[\"*\"]}}"))
        .build();
    IqStreamHttpException e401 = assertThrows(IqStreamHttpException.class, () -> forged.openRun(newRunId()));
    assertEquals(401, e401.statusCode());
    assertEquals("unauthenticated", e401.errorCode());

    // 403: subscribe right only
    String runId = newRunId();
    IqStreamClient readOnly = IqStreamClient.builder(server.baseUri).token(server.token("{\"subscribe\":[\"*\"]}")).build();
    IqStreamHttpException e403 = assertThrows(IqStreamHttpException.class, () -> {
      try (RunPublisher run = readOnly.openRun(runId)) {
        run.send(AgUiEvents.runStarted("t", runId));
      }
    });
    assertEquals(403, e403.statusCode());
    assertEquals("forbidden", e403.errorCode());
  }

  @Test
  void refusedEventsAreClearExceptionsWithStatusCodeAndPosition() throws Exception {
    IqStreamClient client = server.client(server.baseUri, server.publishToken());

    // 400 bad_json, with the position of the bad event; the event before it stays in the run
    String badRun = newRunId();
    RunPublisher bad = client.openRun(badRun);
    bad.send(AgUiEvents.runStarted("t", badRun));
    bad.send("{not json");
    IqStreamHttpException e400 = assertThrows(IqStreamHttpException.class, bad::finish);
    assertEquals(400, e400.statusCode());
    assertEquals("bad_json", e400.errorCode());
    assertEquals(2, e400.position());
    assertEquals(1, e400.lastEventId(), "the run holds the event before the bad one");
    assertTrue(e400.getMessage().contains("at event 2"), e400.getMessage());
    assertEquals(1, client.status(badRun).orElseThrow().events());
    assertThrows(IqStreamHttpException.class, () -> bad.send(AgUiEvents.textMessageStart("m")), "a failed publisher stays failed");

    // 400 missing_type
    String noType = newRunId();
    IqStreamHttpException missing = assertThrows(IqStreamHttpException.class, () -> {
      try (RunPublisher run = client.openRun(noType)) {
        run.send(Map.of("kind", "RUN_STARTED"));
      }
    });
    assertEquals("missing_type", missing.errorCode());
    assertEquals(1, missing.position());

    // 413 event_too_large (the server runs with --max-event-bytes 4k)
    String big = newRunId();
    IqStreamHttpException tooLarge = assertThrows(IqStreamHttpException.class, () -> {
      try (RunPublisher run = client.openRun(big)) {
        run.send(AgUiEvents.runStarted("t", big));
        run.send(AgUiEvents.toolCallResult("m", "tc", "x".repeat(8192)));
      }
    });
    assertEquals(413, tooLarge.statusCode());
    assertEquals("event_too_large", tooLarge.errorCode());

    // 409 run_ended: the run is over, both for a new stream and for a batch
    String ended = newRunId();
    client.publish(ended, List.of(AgUiEvents.runStarted("t", ended), AgUiEvents.runFinished("t", ended)));
    IqStreamHttpException e409 = assertThrows(IqStreamHttpException.class, () -> client.openRun(ended));
    assertEquals(409, e409.statusCode());
    assertEquals("run_ended", e409.errorCode());
    IqStreamHttpException batch409 = assertThrows(IqStreamHttpException.class,
        () -> client.publish(ended, List.of(AgUiEvents.textMessageStart("m"))));
    assertEquals(409, batch409.statusCode());
    assertEquals("run_ended", batch409.errorCode());

    // a bad run id never leaves the client
    assertThrows(IllegalArgumentException.class, () -> client.openRun("no spaces allowed"));
    assertThrows(IllegalArgumentException.class, () -> client.openRun("x".repeat(129)));
  }

  @Test
  void aRefusalMidStreamSurfacesAsItselfWhileSendingGoesOn() throws Exception {
    IqStreamClient client = server.client(server.baseUri, server.publishToken());
    String runId = newRunId();
    RunPublisher run = client.openRun(runId);
    run.send(AgUiEvents.runStarted("t", runId));
    run.send("{\"no\":\"type\"}");
    IqStreamHttpException refused = assertThrows(IqStreamHttpException.class, () -> {
      for (int i = 0; i < 500; i++) {
        run.send(content("m", i)); // the server has answered 400 and stopped reading
        Thread.sleep(2);
      }
      run.finish();
    });
    assertEquals(400, refused.statusCode());
    assertEquals("missing_type", refused.errorCode());
    assertEquals(2, refused.position());
    assertEquals(1, run.requestsStarted(), "a refusal is not retried");
    assertEquals(1, client.status(runId).orElseThrow().events());
  }

  @Test
  void publishesBatchesReadsStatusAndDeletes() {
    IqStreamClient client = server.client(server.baseUri, server.publishToken());
    String runId = newRunId();
    assertTrue(client.status(runId).isEmpty());
    PublishResult first = client.publish(runId, List.of(AgUiEvents.runStarted("t", runId), AgUiEvents.textMessageStart("m")));
    assertEquals(new PublishResult(runId, 2, false), first);
    PublishResult second = client.publish(runId, List.of(content("m", 1), AgUiEvents.textMessageEnd("m")));
    assertEquals(new PublishResult(runId, 4, false), second, "a second request appends");
    RunStatus status = client.status(runId).orElseThrow();
    assertEquals(4, status.events());
    assertFalse(status.ended());
    client.delete(runId);
    // docs/API.md: DELETE of a running run stops it (RUN_ERROR STOPPED appended, kept for --retention) ...
    RunStatus stopped = client.status(runId).orElseThrow();
    assertTrue(stopped.ended(), "a stopped run has ended");
    assertEquals(5, stopped.events(), "its RUN_ERROR STOPPED is event 5");
    // ... and DELETE of an ended run drops it now and tombstones its id: status 410 gone (not absent, not ended)
    client.delete(runId);
    IqStreamHttpException gone = assertThrows(IqStreamHttpException.class, () -> client.status(runId),
        "a deleted run's status is 410, not a reply");
    assertEquals(410, gone.statusCode(), "deleted: gone");
    assertEquals("gone", gone.errorCode());
  }

  @Test
  void aStopFromElsewhereIsADistinctOutcomeSeenAtOnce() throws Exception {
    IqStreamClient client = server.client(server.baseUri, server.publishToken());
    String runId = newRunId();
    try (SseSubscriber browser = new SseSubscriber(server.baseUri, runId, server.publishToken())) {
      RunPublisher run = client.openRun(runId);
      run.send(AgUiEvents.runStarted("t", runId));
      run.send(AgUiEvents.textMessageStart("m"));
      browser.awaitEvents(2, WAIT);
      assertFalse(run.stopped());
      // another process (a stop button behind another instance) stops the run
      server.client(server.baseUri, server.publishToken()).delete(runId);
      assertTrue(run.stopped(), "the open publish learns of the stop without sending anything");
      RunStoppedException stop = assertThrows(RunStoppedException.class, () -> run.send(content("m", 1)));
      assertEquals(409, stop.statusCode());
      assertEquals("run_stopped", stop.errorCode());
      assertEquals(3, stop.lastEventId(), "the stop's RUN_ERROR is the run's last event");
      assertThrows(RunStoppedException.class, run::finish);
      browser.awaitEnd(WAIT);
      assertEquals(3, browser.events.size());
      JsonNode closing = JSON.readTree(browser.events.get(2).data());
      assertEquals("RUN_ERROR", closing.get("type").asText());
      assertEquals("STOPPED", closing.get("code").asText());
    }
    assertTrue(client.status(runId).orElseThrow().ended(), "the stopped run is kept, ended");
  }
}
