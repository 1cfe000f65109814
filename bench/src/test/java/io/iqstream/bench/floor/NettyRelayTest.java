package io.iqstream.bench.floor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The JVM's floor relays every byte both ways, in order; a reader that stops reading stops the writer; a close passes. */
@Timeout(60)
class NettyRelayTest {
  private EventLoopGroup group;
  private ServerSocket backend;
  private int frontend;

  @BeforeEach
  void start() throws Exception {
    group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    backend = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    frontend = NettyRelay.bind(group, backend.getLocalPort());
  }

  @AfterEach
  void stop() throws Exception {
    backend.close();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @Test
  void relaysBothWaysAndPassesTheClose() throws Exception {
    try (Socket client = new Socket(InetAddress.getLoopbackAddress(), frontend);
        Socket accepted = backend.accept()) {
      client.getOutputStream().write("RUN 7\nid: 1\ndata: {}\n\n".getBytes());
      assertArrayEquals("RUN 7\nid: 1\ndata: {}\n\n".getBytes(), accepted.getInputStream().readNBytes(22));
      accepted.getOutputStream().write("back".getBytes());
      assertArrayEquals("back".getBytes(), client.getInputStream().readNBytes(4));
      client.close();
      assertEquals(-1, accepted.getInputStream().read(), "the backend sees the client's close");
    }
  }

  @Test
  void aReaderThatStopsStopsTheWriterAndThenGetsEveryByteInOrder() throws Exception {
    int total = 64 * 1024 * 1024;
    byte[] block = new byte[64 * 1024];
    AtomicLong written = new AtomicLong();
    try (Socket client = new Socket(InetAddress.getLoopbackAddress(), frontend);
        Socket accepted = backend.accept()) {
      CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
        try {
          OutputStream out = client.getOutputStream();
          for (int i = 0; i < total / block.length; i++) {
            fill(block, i);
            out.write(block);
            written.addAndGet(block.length);
          }
          client.shutdownOutput();
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      });
      Thread.sleep(2000);
      // the sockets' buffers on both sides hold a few MiB each; a relay that kept reading would hold the rest
      assertTrue(written.get() < total / 2, written.get() + " B written while the reader read nothing");
      InputStream in = accepted.getInputStream();
      byte[] expected = new byte[block.length];
      byte[] got = new byte[block.length];
      for (int i = 0; i < total / block.length; i++) {
        fill(expected, i);
        assertEquals(block.length, in.readNBytes(got, 0, block.length), "block " + i);
        assertArrayEquals(expected, got, "block " + i);
      }
      assertEquals(-1, in.read());
      writing.get(30, TimeUnit.SECONDS);
    }
  }

  /** Block {@code i} of the stream: its bytes depend on its number, so a lost or repeated block shows. */
  private static void fill(byte[] block, int i) {
    new Random(i).nextBytes(block);
  }
}
