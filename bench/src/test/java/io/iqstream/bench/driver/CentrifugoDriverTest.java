package io.iqstream.bench.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.server.CentrifugoServer;
import io.iqstream.bench.server.Placement;
import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * The Centrifugo driver's protocol pieces against the real server
 * (bench/peers/install-centrifugo.sh): an API publish with the key is taken, one without is refused;
 * a uni_sse subscriber with its connection JWT gets the connect push (epoch) and then the run's
 * events, unwrapped byte for byte from the pushes; one without a token, or with a token signed with
 * another key, is refused with 401; one whose token names another run gets nothing of this one; a
 * subscriber that reconnects with the epoch and offset it kept recovers what it missed in the connect
 * push, in order, and a stale epoch recovers nothing.
 */
@Tag(Peers.TAG)
class CentrifugoDriverTest {
  private final AgUiRun run = new AgUiRun(new RunScript(1.0), new SplittableRandom(9), 0);
  private final byte[][] scratch = {new byte[256]};

  @Test
  @Timeout(120)
  void publishSubscribeAuthorizationAndRecovery() throws Exception {
    Peers.assumeBuilt(CentrifugoServer.binary(Peers.dir()), "install-centrifugo.sh");
    CentrifugoServer server = new CentrifugoServer(Peers.dir());
    try {
      CentrifugoDriver d = (CentrifugoDriver) server.start(Placement.NONE, 1, null);
      int port = d.port();
      String channel = CentrifugoDriver.channel(run.runId());
      String token = d.connectionToken("browser", List.of(channel));
      CentrifugoDriver.Session session = new CentrifugoDriver.Session(token, channel);

      try (PeerHttp none = PeerHttp.send(port, d.subscribeRequest(session, null))) {
        assertEquals(401, none.status(), "a subscriber without a token is refused");
      }
      CentrifugoDriver forged = new CentrifugoDriver("127.0.0.1", port, "another-key-".repeat(4), "k");
      try (PeerHttp bad = PeerHttp.send(port, d.subscribeRequest(session,
          forged.connectionToken("browser", List.of(channel))))) {
        assertEquals(401, bad.status(), "a token signed with another key is refused");
      }
      try (PeerHttp refused = PeerHttp.send(port, publish(d, channel, 0)
          .replaceFirst("X-API-Key: [^\r]*\r\n", ""))) {
        assertEquals(401, refused.status(), "an API publish without the key is refused");
      }

      PeerHttp sub = PeerHttp.send(port, d.subscribeRequest(session, session.token));
      CentrifugoDriver.Session strangerSession = new CentrifugoDriver.Session(
          d.connectionToken("stranger", List.of(CentrifugoDriver.channel("another-run"))),
          CentrifugoDriver.channel("another-run"));
      PeerHttp stranger = PeerHttp.send(port, d.subscribeRequest(strangerSession, strangerSession.token));
      assertEquals(200, sub.status());
      assertTrue(sub.header("content-type").startsWith("text/event-stream"));
      assertTrue(read(session, sub).isEmpty(), "the connect push carries no publication");
      assertFalse(session.epoch().isEmpty(), "the connect push names the stream's epoch");
      assertNotNull(stranger.nextEvent(5000), "the stranger's connect push");

      post(d, port, channel, 0);
      List<String> first = read(session, sub);
      assertEquals(List.of(new String(run.event(0), StandardCharsets.UTF_8)), first, "byte for byte");
      assertEquals(1, session.offset());
      assertNull(stranger.nextEvent(700), "a token for another run gets nothing of this one");
      stranger.close();

      sub.close();
      post(d, port, channel, 1);
      post(d, port, channel, 2);
      try (PeerHttp resumed = PeerHttp.send(port, d.subscribeRequest(session, session.token))) {
        assertEquals(200, resumed.status());
        assertEquals(List.of(new String(run.event(1), StandardCharsets.UTF_8),
            new String(run.event(2), StandardCharsets.UTF_8)), read(session, resumed),
            "recovered in the connect push, in order");
        assertEquals(3, session.offset());
      }

      CentrifugoDriver.Session stale = new CentrifugoDriver.Session(token, channel);
      stale.epoch = "not-the-epoch";
      stale.offset = 1;
      try (PeerHttp resumed = PeerHttp.send(port, d.subscribeRequest(stale, token))) {
        assertTrue(read(stale, resumed).isEmpty(), "another epoch recovers nothing");
        assertEquals(3, stale.offset(), "and starts at the stream's top");
      }
    } finally {
      server.close();
    }
  }

  /**
   * A browser that drops on an event (the run closes its connection) stops reading the push there: the
   * offset it resumes from is that event's, not that of the publications after it in the same push,
   * which it never handed on (else recovery would skip them).
   */
  @Test
  void anOffsetMovesOnlyPastThePublicationsHandedOn() {
    CentrifugoDriver.Session s = new CentrifugoDriver.Session("t", "run:r");
    String push = "{\"connect\":{\"client\":\"c\",\"subs\":{\"run:r\":{\"epoch\":\"E\",\"offset\":7,"
        + "\"publications\":[{\"data\":{\"a\":1},\"offset\":5},{\"data\":[2, \"x\"],\"offset\":6},"
        + "{\"data\":\"s\",\"offset\":7}],\"recovered\":true}}}}";
    List<String> got = new ArrayList<>();
    boolean[] open = {true};
    assertTrue(CentrifugoDriver.read(s, Unpooled.copiedBuffer(push, StandardCharsets.UTF_8), scratch,
        () -> open[0], b -> {
          got.add(b.toString(StandardCharsets.UTF_8));
          open[0] = got.size() < 2; // drops on the second
        }));
    assertEquals(List.of("{\"a\":1}", "[2, \"x\"]"), got, "each publication's data as sent");
    assertEquals("E", s.epoch());
    assertEquals(6, s.offset(), "the last one handed on, not the stream's top");

    assertFalse(CentrifugoDriver.read(s, Unpooled.copiedBuffer("{\"disconnect\":{\"code\":3001}}",
        StandardCharsets.UTF_8), scratch, () -> true, b -> got.add("?")), "a disconnect push ends it");
    assertEquals(2, got.size());
  }

  /** The data of the publications in the next push. */
  private List<String> read(CentrifugoDriver.Session session, PeerHttp http) throws Exception {
    PeerHttp.Event e = http.nextEvent(5000);
    assertNotNull(e, "a push");
    List<String> data = new ArrayList<>();
    assertTrue(CentrifugoDriver.read(session, Unpooled.wrappedBuffer(
        e.data().getBytes(StandardCharsets.UTF_8)), scratch, () -> true,
        b -> data.add(b.toString(StandardCharsets.UTF_8))), e.data());
    return data;
  }

  private String publish(CentrifugoDriver d, String channel, int index) {
    byte[] prefix = CentrifugoDriver.publishPrefix(channel);
    byte[] event = run.event(index);
    return d.publishHead(prefix.length + event.length + 1) + new String(prefix, StandardCharsets.UTF_8)
        + new String(event, StandardCharsets.UTF_8) + "}";
  }

  private void post(CentrifugoDriver d, int port, String channel, int index) throws Exception {
    try (PeerHttp pub = PeerHttp.send(port, publish(d, channel, index))) {
      assertEquals(200, pub.status());
      String body = pub.body();
      assertTrue(body.contains("\"result\"") && !body.contains("\"error\""), body);
    }
  }
}
