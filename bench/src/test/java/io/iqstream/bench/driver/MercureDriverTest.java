package io.iqstream.bench.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.server.MercureServer;
import io.iqstream.bench.server.Placement;
import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Mercure driver's protocol pieces against the real hub (bench/peers/install-mercure.sh), with
 * either transport: a publish with the publisher JWT is taken and one without is refused; a
 * subscriber with its own JWT gets the run's events byte for byte with the bench's ids; one without a
 * token is refused, one whose token names another run gets nothing of this run; a subscriber that
 * reconnects with Last-Event-ID gets what it missed from the bolt history, and only what follows
 * from the local transport (it keeps none).
 */
@Tag(Peers.TAG)
class MercureDriverTest {
  private final AgUiRun run = new AgUiRun(new RunScript(1.0), new SplittableRandom(7), 0);

  @ParameterizedTest(name = "history = {0}")
  @ValueSource(booleans = {false, true})
  @Timeout(120)
  void publishSubscribeAuthorizationAndResume(boolean history) throws Exception {
    Peers.assumeBuilt(MercureServer.binary(Peers.dir()), "install-mercure.sh");
    MercureServer server = new MercureServer(Peers.dir(), history);
    try {
      MercureDriver d = (MercureDriver) server.start(Placement.NONE, 1, null);
      int port = d.port();
      String topic = MercureDriver.TOPIC_PREFIX + run.runId();
      String other = MercureDriver.TOPIC_PREFIX + "another-run";
      String token = d.subscriberToken(topic);

      try (PeerHttp none = PeerHttp.send(port, d.subscribeRequest(topic, null, null))) {
        assertEquals(401, none.status(), "a subscriber without a token is refused");
      }
      String unsigned = d.publishRequest(MercureDriver.publishBody(topic, "x-1", run.event(0)))
          .replaceFirst("Authorization: Bearer [^\r]*\r\n", "");
      try (PeerHttp refused = PeerHttp.send(port, unsigned)) {
        assertEquals(401, refused.status(), "a publish without the publisher JWT is refused");
      }

      PeerHttp sub = PeerHttp.send(port, d.subscribeRequest(topic, token, null));
      PeerHttp stranger = PeerHttp.send(port, d.subscribeRequest(topic, d.subscriberToken(other), null));
      assertEquals(200, sub.status());
      assertTrue(sub.header("content-type").startsWith("text/event-stream"));
      assertEquals(200, stranger.status(), "Mercure lets it subscribe, but sends it no private update");

      publish(d, port, topic, 0);
      PeerHttp.Event first = sub.nextEvent(5000);
      assertNotNull(first, "the subscriber got the published event");
      assertEquals(run.runId() + "-1", first.id());
      assertEquals(new String(run.event(0), StandardCharsets.UTF_8), first.data(), "byte for byte");
      assertNull(stranger.nextEvent(700), "a token for another run gets nothing of this one");
      stranger.close();

      sub.close();
      publish(d, port, topic, 1);
      publish(d, port, topic, 2);
      try (PeerHttp resumed = PeerHttp.send(port, d.subscribeRequest(topic, token, first.id()))) {
        assertEquals(200, resumed.status());
        if (history) {
          assertEquals(run.runId() + "-2", resumed.nextEvent(5000).id(), "replayed from the history");
          assertEquals(run.runId() + "-3", resumed.nextEvent(5000).id());
        } else {
          publish(d, port, topic, 3);
          assertEquals(run.runId() + "-4", resumed.nextEvent(5000).id(),
              "transport local keeps no history: only what follows the reconnect");
        }
      }
    } finally {
      server.close();
    }
  }

  private void publish(MercureDriver d, int port, String topic, int index) throws Exception {
    String id = run.runId() + "-" + (index + 1);
    try (PeerHttp pub = PeerHttp.send(port, d.publishRequest(
        MercureDriver.publishBody(topic, id, run.event(index))))) {
      assertEquals(200, pub.status());
      assertEquals(id, pub.body(), "Mercure answers with the update's id");
    }
  }
}
