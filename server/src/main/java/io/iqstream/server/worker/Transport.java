package io.iqstream.server.worker;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The socket transport: native epoll (default on Linux), io_uring (on request, where the kernel allows), NIO as
 * the fallback. Chosen once at start; the reason for a fallback is logged.
 */
public record Transport(String name, IoHandlerFactory ioHandlerFactory,
        Class<? extends ServerChannel> serverChannelClass) {
    private static final Logger LOG = LoggerFactory.getLogger(Transport.class);

    /** Resolves {@code auto}, {@code epoll}, {@code io_uring} or {@code nio} to what this machine can run. */
    public static Transport select(String wanted) {
        if (wanted.equals("io_uring")) {
            if (IoUring.isAvailable()) {
                return new Transport("io_uring", IoUringIoHandler.newFactory(), IoUringServerSocketChannel.class);
            }
            LOG.warn("io_uring transport unavailable ({}); falling back", IoUring.unavailabilityCause().toString());
        }
        if (wanted.equals("auto") || wanted.equals("epoll") || wanted.equals("io_uring")) {
            if (Epoll.isAvailable()) {
                return new Transport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class);
            }
            LOG.warn("epoll transport unavailable ({}); falling back to NIO", Epoll.unavailabilityCause().toString());
        }
        return new Transport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class);
    }
}
