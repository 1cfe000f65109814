package io.iqstream.server.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * The connections a listener may hold at once. Any thread: one atomic counter shared by every connection of the
 * listener, touched twice per connection (accept, close), never per request. When full, {@link #tryAcquire}
 * answers false, counts the refusal, and the caller closes the new connection at once.
 *
 * <p>The main port's default cap comes from the process's file limit ({@code RLIMIT_NOFILE}, soft) less what the
 * server itself holds: the descriptors already open when it is computed (jars, listeners, each event loop's
 * epoll/event fds), the admin port's connections, and a reserve for what opens later (jars loaded lazily, logs).
 * So the acceptor does not meet {@code EMFILE} and the admin port keeps a descriptor to answer {@code /healthz}
 * with. (Meeting {@code EMFILE} is worse than a refused accept: a class loaded for the first time from a
 * directory cannot be opened, and the JVM then fails that class for good.)
 */
public final class ConnectionSlots {
    /** Descriptors kept back from the file limit besides the admin port's and the loops'. */
    public static final int FILE_RESERVE = 64;
    /** Descriptors each event loop holds (epoll fd, eventfd, timerfd), rounded up. */
    private static final int FILES_PER_LOOP = 4;
    /** Cap when the file limit cannot be read (not Linux, no management bean). */
    private static final int UNKNOWN_LIMIT_MAX = 10_000;
    private static final int MIN_MAX = 16;

    private final int max;
    private final AtomicInteger open = new AtomicInteger();
    /** The connections holding a slot ({@link #tryAcquire(Channel)}), for {@link #closeAll}. */
    private final Set<Channel> channels = ConcurrentHashMap.newKeySet();
    private final LongAdder openGauge;
    private final LongAdder refused;

    /**
     * @param max connections held at once
     * @param openGauge incremented and decremented with each held connection (a metric), or null
     * @param refused incremented for each connection refused
     */
    public ConnectionSlots(int max, LongAdder openGauge, LongAdder refused) {
        this.max = max;
        this.openGauge = openGauge;
        this.refused = refused;
    }

    /**
     * Takes a slot for {@code channel}, a new connection, and keeps it among the open ones until {@link
     * #release(Channel)}; false (counted) when all are taken.
     */
    public boolean tryAcquire(Channel channel) {
        if (!tryAcquire()) {
            return false;
        }
        channels.add(channel);
        return true;
    }

    /** Gives back the slot of {@code channel}, a connection that closed. */
    public void release(Channel channel) {
        channels.remove(channel);
        release();
    }

    /**
     * Closes every connection holding a slot, each on its own loop, and waits up to {@code timeoutMs} for them:
     * at the server's close, while the loops still run, so each pipeline sees its close and releases what it holds
     * (a loop shutting down closes only the channels registered on it at that moment, then ends).
     */
    public void closeAll(long timeoutMs) {
        List<ChannelFuture> closing = new ArrayList<>(channels.size());
        for (Channel c : channels) {
            closing.add(c.close());
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (ChannelFuture f : closing) {
            f.awaitUninterruptibly(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
    }

    /** Takes a slot for a new connection; false (counted) when all are taken. */
    public boolean tryAcquire() {
        while (true) {
            int n = open.get();
            if (n >= max) {
                refused.increment();
                return false;
            }
            if (open.compareAndSet(n, n + 1)) {
                if (openGauge != null) {
                    openGauge.increment();
                }
                return true;
            }
        }
    }

    /** Gives back the slot of a connection that closed. */
    public void release() {
        open.decrementAndGet();
        if (openGauge != null) {
            openGauge.decrement();
        }
    }

    public int max() {
        return max;
    }

    public int open() {
        return open.get();
    }

    /**
     * The main port's default cap: the soft file limit less the descriptors open now, {@link #FILE_RESERVE}, the
     * loops' descriptors and the admin port's cap; at least {@value #MIN_MAX}. Call it once the loops exist.
     */
    public static int defaultMax(int loops, int adminMax) {
        long limit = fileLimit();
        if (limit <= 0) {
            return UNKNOWN_LIMIT_MAX;
        }
        long max = limit - openFiles() - FILE_RESERVE - (long) loops * FILES_PER_LOOP - adminMax;
        return (int) Math.max(MIN_MAX, Math.min(Integer.MAX_VALUE, max));
    }

    /** Descriptors the process holds now ({@code /proc/self/fd}); 0 when it cannot tell. */
    public static long openFiles() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** The process's soft {@code RLIMIT_NOFILE}; -1 when unknown or unlimited. */
    public static long fileLimit() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/limits"));
            for (String line : lines) {
                if (line.startsWith("Max open files")) {
                    String[] parts = line.substring("Max open files".length()).trim().split("\\s+");
                    return parts[0].equals("unlimited") ? -1 : Long.parseLong(parts[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: ask the JVM below
        }
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            long n = unix.getMaxFileDescriptorCount();
            return n > 0 && n < Long.MAX_VALUE ? n : -1;
        }
        return -1;
    }
}
