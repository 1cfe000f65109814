package io.iqstream.bench.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.bench.server.DurableNodeServer;
import io.iqstream.bench.server.ElectricServer;
import io.iqstream.bench.server.IqStreamServer;
import io.iqstream.bench.server.IqStreamSetup;
import io.iqstream.bench.server.Placement;
import io.iqstream.bench.server.ServerUnderTest;
import io.iqstream.bench.workload.AgUiRun;
import io.iqstream.bench.workload.RunScript;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Durable Streams driver's protocol pieces against the real servers: Electric's Rust server in both
 * durability modes (bench/peers/install-durable-streams.sh) and the Node reference server
 * (bench/peers/install-durable-node.sh). The create is answered 201; a live SSE read from {@code -1} gets the first
 * append as a data frame whose JSON array holds that event byte for byte, then a control frame with the offset;
 * a read resumed from that offset gets exactly the events appended since, and the last append's
 * {@code Stream-Closed} ends the read with a control frame saying so. And IQ-Stream's endpoint with the driver's
 * tokens (the server jar, as the bench runs it).
 */
@Tag(Peers.TAG)
class DurableStreamsDriverTest {
  private final AgUiRun run = new AgUiRun(new RunScript(1.0), new SplittableRandom(7), 0);

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"electric-memory", "electric-wal", "durable-node"})
  @Timeout(120)
  void createAppendLiveReadResumeAndClose(String name) throws Exception {
    ServerUnderTest server;
    if (name.startsWith("electric")) {
      Peers.assumeBuilt(ElectricServer.binary(Peers.dir()), "install-durable-streams.sh");
      server = new ElectricServer(Peers.dir(), name.equals("electric-memory"));
    } else {
      // the installed package's folder (searchable, so "executable" to assumeBuilt) stands for the install
      Peers.assumeBuilt(Peers.dir().resolve("durable-node/node_modules/@durable-streams/server"),
          "install-durable-node.sh");
      server = new DurableNodeServer(Peers.dir());
    }
    try {
      DurableStreamsDriver d = (DurableStreamsDriver) server.start(Placement.NONE, 1, null);
      int port = d.port();
      String id = run.runId();
      try (PeerHttp create = PeerHttp.send(port, d.createRequest(id))) {
        assertEquals(201, create.status(), "the run's stream is created");
      }
      PeerHttp live = PeerHttp.send(port, d.readRequest(id, "-1", null));
      assertEquals(200, live.status());
      assertTrue(live.header("content-type").startsWith("text/event-stream"));
      append(d, port, 0, false);
      List<String> first = new ArrayList<>();
      String offset = null;
      while (first.isEmpty()) { // a read of an empty stream starts with a control frame (up to date at 0)
        offset = batch(live, first);
      }
      assertEquals(List.of(text(0)), first, "the event, byte for byte, as one message");
      live.close();

      append(d, port, 1, false);
      append(d, port, 2, false);
      try (PeerHttp resumed = PeerHttp.send(port, d.readRequest(id, offset, null))) {
        assertEquals(200, resumed.status());
        List<String> got = new ArrayList<>();
        while (got.size() < 2) { // in one batch or two
          batch(resumed, got);
        }
        assertEquals(List.of(text(1), text(2)), got, "exactly what came after the saved offset");
        append(d, port, RunScript.EVENTS - 1, true);
        List<String> last = new ArrayList<>();
        PeerHttp.Event control = null;
        while (last.isEmpty() || control == null || !control.data().contains("\"streamClosed\":true")) {
          PeerHttp.Event e = resumed.nextEvent(5000);
          assertNotNull(e, "the closing append and the closure arrive");
          if (e.data().startsWith("[")) {
            last.addAll(split(e.data()));
          } else {
            control = e;
          }
        }
        assertEquals(List.of(text(RunScript.EVENTS - 1)), last);
      }
    } finally {
      server.close();
    }
  }

  /**
   * IQ-Stream's endpoint as the bench drives it: the backend's token creates and appends, no token is 401, a
   * browser's token for another run's stream is 403, its own reads the run live and resumes from an offset.
   */
  @Test
  @Timeout(120)
  void iqStreamEndpointWithTokens() throws Exception {
    Path jar = IqStreamServer.defaultJar(Peers.dir().getParent().getParent());
    Assumptions.assumeTrue(Files.isRegularFile(jar), "no server jar at " + jar);
    IqStreamServer server = IqStreamServer.durableStreams(jar, IqStreamSetup.DEFAULT,
        List.of("-Xmx256m", "--enable-native-access=ALL-UNNAMED"));
    try {
      server.install();
      DurableStreamsDriver d = (DurableStreamsDriver) server.start(Placement.NONE, 1, null);
      String id = run.runId();
      String unsigned = d.createRequest(id).replaceFirst("Authorization: Bearer [^\r]*\r\n", "");
      try (PeerHttp refused = PeerHttp.send(d.port(), unsigned)) {
        assertEquals(401, refused.status(), "a create without a token");
      }
      try (PeerHttp create = PeerHttp.send(d.port(), d.createRequest(id))) {
        assertEquals(201, create.status());
      }
      try (PeerHttp stranger = PeerHttp.send(d.port(), d.readRequest(id, "-1", d.subscriberToken("another-run")))) {
        assertEquals(403, stranger.status(), "a browser's token names its own run's stream only");
      }
      PeerHttp live = PeerHttp.send(d.port(), d.readRequest(id, "-1", d.subscriberToken(id)));
      assertEquals(200, live.status());
      append(d, d.port(), 0, false);
      List<String> first = new ArrayList<>();
      String offset = null;
      while (first.isEmpty()) {
        offset = batch(live, first);
      }
      assertEquals(List.of(text(0)), first);
      live.close();
      append(d, d.port(), 1, false);
      try (PeerHttp resumed = PeerHttp.send(d.port(), d.readRequest(id, offset, d.subscriberToken(id)))) {
        List<String> got = new ArrayList<>();
        while (got.isEmpty()) {
          batch(resumed, got);
        }
        assertEquals(List.of(text(1)), got, "exactly what came after the saved offset");
      }
    } finally {
      server.close();
    }
  }

  /** Reads data frames into {@code into} up to the next control frame; returns its offset. */
  private static String batch(PeerHttp sse, List<String> into) throws Exception {
    while (true) {
      PeerHttp.Event e = sse.nextEvent(5000);
      assertNotNull(e, "a frame within 5 s");
      if (e.data().startsWith("[")) {
        into.addAll(split(e.data()));
      } else {
        ByteBuf control = Unpooled.copiedBuffer(e.data(), StandardCharsets.UTF_8);
        String offset = DurableStreamsSseSink.nextOffset(control);
        control.release();
        assertNotNull(offset, "a control frame carries streamNextOffset: " + e.data());
        return offset;
      }
    }
  }

  private static List<String> split(String array) {
    return DurableStreamsSseSinkTest.messages(array);
  }

  private String text(int index) {
    return new String(run.event(index), StandardCharsets.UTF_8);
  }

  private void append(DurableStreamsDriver d, int port, int index, boolean close) throws Exception {
    byte[] event = run.event(index);
    try (PeerHttp post = PeerHttp.send(port, d.appendHead(run.runId(), event.length, close)
        + new String(event, StandardCharsets.UTF_8))) {
      assertTrue(post.status() == 204 || post.status() == 200, "append answered " + post.status());
    }
  }
}
