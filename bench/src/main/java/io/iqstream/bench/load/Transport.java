package io.iqstream.bench.load;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringIoHandlerConfig;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import java.util.Locale;

/**
 * The generator's Netty transport. {@code auto} is epoll where the kernel has it, else NIO: io_uring,
 * the batching transport, collapses under this generator's traffic (thousands of sockets per thread,
 * a request per event on the Durable Streams drivers): at K = 1,000 its completion queue overflowed
 * and 2.19% of the events were delivered, where epoll delivered all of them (docs/BENCHMARK.md,
 * <i>io_uring's completion queue</i>). io_uring stays selectable by name. Any thread.
 */
public enum Transport {
  IO_URING, EPOLL, NIO;

  /**
   * The generator's io_uring completion queue, entries (Netty's default gave 4,096 here): one
   * generator thread owns thousands of sockets, and a loop turn that comes late (a GC cycle, a
   * preempted thread) finds more completions than that waiting. The kernel
   * then parks them on its overflow list and Netty warns "CompletionQueue overflow detected" (seen
   * at K = 300 on the loaded 2-CPU VM); a deeper queue absorbs such a turn.
   */
  static final int IO_URING_CQ_ENTRIES = 32_768;

  /** {@code auto}, {@code io_uring}, {@code epoll} or {@code nio}. */
  public static Transport parse(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "auto" -> Epoll.isAvailable() ? EPOLL : NIO;
      case "io_uring", "iouring", "io-uring" -> requireAvailable(IO_URING, IoUring.isAvailable());
      case "epoll" -> requireAvailable(EPOLL, Epoll.isAvailable());
      case "nio" -> NIO;
      default -> throw new IllegalArgumentException("unknown transport: " + name);
    };
  }

  private static Transport requireAvailable(Transport t, boolean available) {
    if (!available) {
      throw new IllegalArgumentException(t + " is not available on this machine");
    }
    return t;
  }

  public EventLoopGroup newGroup(int threads) {
    IoHandlerFactory factory = switch (this) {
      case IO_URING -> IoUringIoHandler.newFactory(new IoUringIoHandlerConfig()
          .setCqSize(IO_URING_CQ_ENTRIES));
      case EPOLL -> EpollIoHandler.newFactory();
      case NIO -> NioIoHandler.newFactory();
    };
    return new MultiThreadIoEventLoopGroup(threads, factory);
  }

  public Class<? extends SocketChannel> socketChannel() {
    return switch (this) {
      case IO_URING -> IoUringSocketChannel.class;
      case EPOLL -> EpollSocketChannel.class;
      case NIO -> NioSocketChannel.class;
    };
  }

  public Class<? extends ServerChannel> serverChannel() {
    return switch (this) {
      case IO_URING -> IoUringServerSocketChannel.class;
      case EPOLL -> EpollServerSocketChannel.class;
      case NIO -> NioServerSocketChannel.class;
    };
  }
}
