package io.iqstream.bench.load;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.channel.Channel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.junit.jupiter.api.Test;

/**
 * A publisher whose connect failed before its channel was registered (Netty hands back a channel
 * whose pipeline throws "channel not registered to an event loop", as when the generator has no file
 * descriptor left for a socket) must not throw out of the shard's tick: that failed whole K = 1,000
 * rows against servers that fell behind, and the failed row's sockets then leaked into the next
 * servers' rows (2026-12-01).
 */
class PublisherTest {
  @Test
  void flushAndCloseOfAChannelThatWasNeverRegisteredDoNotThrow() {
    NioSocketChannel never = new NioSocketChannel();
    try {
      assertFalse(never.isRegistered());
      assertThrows(IllegalStateException.class, never::flush, "what the tick used to call");
      Publisher p = new Publisher(null) {
        {
          channel = never;
        }

        @Override
        public void writeEvent(int index) {}

        @Override
        public void finish() {}
      };
      assertDoesNotThrow(p::flush);
      assertDoesNotThrow(p::close);
    } finally {
      Channel c = never;
      c.unsafe().closeForcibly();
    }
  }
}
