package io.iqstream.server.warmup;

import io.iqstream.server.ServerContext;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.auth.AuthSettings;
import io.iqstream.server.auth.Authorizer;
import io.iqstream.server.auth.DevCredentials;
import io.iqstream.server.auth.TokenMinter;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.http.ConnectionSlots;
import io.iqstream.server.http.IqStreamInitializer;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.stream.DurableStreams;
import io.iqstream.server.worker.Worker;
import io.iqstream.server.worker.Workers;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Warms the JIT before the server's main port accepts ({@code --warmup}, on by default). A server just started runs
 * its request, publish and resume code in the interpreter: on one CPU a reconnect then takes about a millisecond
 * instead of about a tenth of one, until several thousand of them have been served (a run's per-connection code
 * runs a few times per run, so under real traffic that takes minutes). The warm-up makes those requests itself,
 * through the real pipeline on the real worker loops, with the main port's socket options, on a listener of its
 * own on a private loopback port: {@link WarmupTraffic} publishes made-up runs, follows them, resumes them, does
 * the same with Durable Streams, and checks every answer.
 *
 * <p>Nothing of it outlives the warm-up: it has its own registries and Durable Streams (on the same loops; its
 * streams in memory only, never in the data directory), its own metrics, memory
 * budget and connection slots, and its own random HS256 key that only it knows, so no token of it is valid on the
 * server's ports; its listener is closed, and its runs dropped, before the main port accepts. It stops at its
 * request count or after {@link #TIME_LIMIT_MS}, whichever is first; a wrong answer or an I/O failure stops it too,
 * and the server starts anyway (the caller logs the report). Runs on the starting thread, once.
 */
public final class Warmup {
    /** The longest a warm-up may take, however slow the machine. */
    public static final long TIME_LIMIT_MS = 20_000;
    private static final long MEMORY_BYTES = 64L << 20;
    private static final long COMPILER_QUIET_MS = 200;

    private Warmup() {
    }

    /**
     * Makes {@code config.warmupRequests()} requests (0: returns {@link WarmupReport#OFF} at once) on
     * {@code workerGroup}'s loops, through a listener that {@code bootstrap} makes for a channel initializer: the
     * main port's own options.
     */
    public static WarmupReport run(ServerConfig config, EventLoopGroup workerGroup, ByteBufAllocator allocator,
            Function<IqStreamInitializer, ServerBootstrap> bootstrap) throws InterruptedException {
        if (config.warmupRequests() == 0) {
            return WarmupReport.OFF;
        }
        long startNs = System.nanoTime();
        DevCredentials credentials = DevCredentials.generate();
        Metrics metrics = new Metrics();
        MemoryBudget budget = new MemoryBudget(MEMORY_BYTES, 4_096);
        Authorizer authorizer = Authorizer.create(AuthSettings.hmac(credentials.secret()));
        List<Worker> workers = new ArrayList<>();
        int i = 0;
        for (EventExecutor e : workerGroup) {
            EventLoop loop = (EventLoop) e;
            workers.add(new Worker(i++, loop, new RunRegistry(loop, config, budget, metrics, allocator)));
        }
        ServerContext context = new ServerContext(config, new Workers(workers), authorizer, metrics, budget);
        // its streams in memory, whatever --durability says: nothing of the warm-up is written to the data directory
        DurableStreams streams = new DurableStreams(budget, metrics, context.workers(), config.maxRunBytes(), null, 0);
        context.durableStreams(streams);
        ConnectionSlots slots = new ConnectionSlots(1_024, metrics.connectionsOpen, metrics.connectionsRefusedMax);
        Channel listener = null;
        WarmupTraffic traffic = null;
        String failure = null;
        try {
            listener = bootstrap.apply(new IqStreamInitializer(context, slots)).bind("127.0.0.1", 0).sync().channel();
            traffic = new WarmupTraffic((InetSocketAddress) listener.localAddress(),
                    new TokenMinter(credentials.secret()), credentials.publisherToken(), config.warmupRequests(),
                    startNs + TimeUnit.MILLISECONDS.toNanos(TIME_LIMIT_MS));
            traffic.run();
            awaitCompilerIdle(startNs + TimeUnit.MILLISECONDS.toNanos(TIME_LIMIT_MS));
        } catch (IOException | RuntimeException e) {
            failure = e.getMessage() == null ? e.toString() : e.getMessage();
        } finally {
            if (listener != null) {
                listener.close().sync();
            }
            awaitClosed(metrics);
            for (Worker w : workers) {
                w.loop().submit(() -> w.registry().dropAll()).sync();
            }
            streams.dropAll(); // its connections are closed: no loop touches its streams any more
            authorizer.close();
        }
        if (failure == null) {
            failure = leftBehind(metrics, budget);
        }
        return new WarmupReport(traffic == null ? 0 : traffic.requests(), traffic == null ? 0 : traffic.runs(),
                traffic == null ? 0 : traffic.resumes(), traffic == null ? 0 : traffic.streams(),
                traffic == null ? 0 : traffic.streamRequests(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs),
                failure);
    }

    /**
     * Waits until the JIT has compiled what the traffic queued (its total compilation time has not grown for
     * {@link #COMPILER_QUIET_MS}), or until {@code deadlineNs}: on a small CPU share the compiler threads fall behind
     * the traffic, and the first clients would otherwise meet code still being compiled.
     */
    private static void awaitCompilerIdle(long deadlineNs) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long last = jit.getTotalCompilationTime();
        long quietSinceNs = System.nanoTime();
        while (System.nanoTime() - deadlineNs < 0
                && System.nanoTime() - quietSinceNs < TimeUnit.MILLISECONDS.toNanos(COMPILER_QUIET_MS)) {
            Thread.sleep(20);
            long now = jit.getTotalCompilationTime();
            if (now != last) {
                last = now;
                quietSinceNs = System.nanoTime();
            }
        }
    }

    /** What the warm-up failed to give back once its runs were dropped (null: nothing). */
    private static String leftBehind(Metrics metrics, MemoryBudget budget) {
        if (metrics.connectionsOpen.sum() != 0) {
            return metrics.connectionsOpen.sum() + " warm-up connections still open after 1 s";
        }
        if (metrics.runsActive.sum() != 0 || budget.committedBytes() != 0) {
            return metrics.runsActive.sum() + " warm-up runs and " + budget.committedBytes()
                    + " bytes of its budget left after its runs were dropped";
        }
        return null;
    }

    /** Waits (up to a second) until the server side has seen every warm-up connection close. */
    private static void awaitClosed(Metrics metrics) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (metrics.connectionsOpen.sum() > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
    }
}
