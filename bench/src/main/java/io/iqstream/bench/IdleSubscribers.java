package io.iqstream.bench;

import io.iqstream.bench.driver.DurableStreamsDriver;
import io.iqstream.bench.server.ProcTree;
import io.iqstream.bench.server.ServerUnderTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What an idle subscriber costs a Durable Streams server: one JSON stream is created, then {@code n} browsers
 * each open a live SSE read of it ({@code offset=-1&live=sse}, each with its own subscriber token where the
 * server checks them) and get their answer's head and the first control frame, and nothing more is written. The
 * figure is the server's growth over the {@code n} readers ÷ {@code n}: its resident memory (the whole process
 * tree, /proc) after 2 s against before the first reader, plus, for a server whose heap is measured apart
 * (IQ-Stream's fixed, pre-touched JVM heap, {@link ServerUnderTest#heapUsedKib()}), its live heap's growth after a
 * full collection. Measured on a server started fresh for it, with no load before. Runner's thread; blocking
 * sockets on loopback.
 *
 * @param subscribers readers held open ({@code n})
 * @param refused readers not answered 200 (the figure is then over those that were)
 */
record IdleSubscribers(int subscribers, int refused, long rssKibBefore, long rssKibAfter, long heapKibBefore,
    long heapKibAfter, double kibPerSubscriber) {

  /** How long the readers are left open before the second reading. */
  static final long SETTLE_MS = 2_000;

  static IdleSubscribers measure(ServerUnderTest server, DurableStreamsDriver driver, int n)
      throws IOException, InterruptedException {
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", driver.port());
    String runId = "idle-" + UUID.randomUUID();
    try (SocketChannel create = SocketChannel.open(address)) {
      String head = exchange(create, driver.createRequest(runId));
      if (!head.startsWith("HTTP/1.1 201") && !head.startsWith("HTTP/1.1 200")) {
        throw new IOException("the idle readers' stream was not created: " + firstLine(head));
      }
    }
    String request = driver.readRequest(runId, "-1", driver.subscriberToken(runId));
    List<Long> pids = ProcTree.withDescendants(server.pid());
    long heapBefore = server.heapUsedKib();
    long rssBefore = ProcTree.rssKib(pids);
    List<SocketChannel> readers = new ArrayList<>(n);
    int refused = 0;
    try {
      for (int i = 0; i < n; i++) {
        SocketChannel reader = SocketChannel.open(address);
        readers.add(reader);
        if (!exchange(reader, request).startsWith("HTTP/1.1 200")) {
          refused++;
        }
      }
      Thread.sleep(SETTLE_MS);
      long rssAfter = ProcTree.rssKib(ProcTree.withDescendants(server.pid()));
      long heapAfter = server.heapUsedKib();
      long growthKib = Math.max(0, rssAfter - rssBefore)
          + (heapBefore >= 0 && heapAfter >= 0 ? Math.max(0, heapAfter - heapBefore) : 0);
      int held = n - refused;
      return new IdleSubscribers(n, refused, rssBefore, rssAfter, heapBefore, heapAfter,
          held == 0 ? Double.NaN : Math.round(100.0 * growthKib / held) / 100.0);
    } finally {
      for (SocketChannel reader : readers) {
        reader.close();
      }
    }
  }

  /** Writes {@code request} and returns what the first read brings back (the response's head, for these). */
  private static String exchange(SocketChannel channel, String request) throws IOException {
    channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
    ByteBuffer in = ByteBuffer.allocate(4096);
    if (channel.read(in) <= 0) {
      return "";
    }
    in.flip();
    return StandardCharsets.US_ASCII.decode(in).toString();
  }

  private static String firstLine(String head) {
    int nl = head.indexOf('\r');
    return nl < 0 ? head : head.substring(0, nl);
  }
}
