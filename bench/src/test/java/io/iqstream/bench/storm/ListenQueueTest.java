package io.iqstream.bench.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ListenQueueTest {
  @TempDir Path dir;

  @Test
  void readsTheListenCountersOfTcpExtAndTheirGrowth() throws Exception {
    Path netstat = dir.resolve("netstat");
    Files.writeString(netstat, "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPHPHits\n"
        + "TcpExt: 0 7 9 100\n"
        + "IpExt: InNoRoutes\nIpExt: 0\n");
    ListenQueue before = ListenQueue.read(netstat);
    assertEquals(new ListenQueue(7, 9), before);
    Files.writeString(netstat, "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPHPHits\n"
        + "TcpExt: 0 10 15 100\n");
    assertEquals(new ListenQueue(3, 6), ListenQueue.read(netstat).since(before));
    assertEquals(new ListenQueue(0, 0), ListenQueue.read(dir.resolve("absent")));
  }
}
