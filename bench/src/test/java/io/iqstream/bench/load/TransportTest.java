package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;

class TransportTest {
  /** io_uring collapsed the generator at K = 1,000 (docs/BENCHMARK.md): the default must not pick it. */
  @Test
  void autoPicksEpollWhereItExistsAndNeverIoUring() {
    Transport auto = Transport.parse("auto");
    assertNotEquals(Transport.IO_URING, auto);
    assertEquals(Epoll.isAvailable() ? Transport.EPOLL : Transport.NIO, auto);
  }

  @Test
  void namedTransportsAreKept() {
    assertEquals(Transport.NIO, Transport.parse("nio"));
    if (Epoll.isAvailable()) {
      assertEquals(Transport.EPOLL, Transport.parse("EPOLL"));
    }
  }
}
