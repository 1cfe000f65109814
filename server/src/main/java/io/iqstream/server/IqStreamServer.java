package io.iqstream.server;

import io.iqstream.server.demo.DemoSite;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.admission.MemoryPlan;
import io.iqstream.server.auth.AuthSettings;
import io.iqstream.server.auth.Authorizer;
import io.iqstream.server.config.Flag;
import io.iqstream.server.cluster.Cluster;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.http.AdminInitializer;
import io.iqstream.server.http.ConnectionSlots;
import io.iqstream.server.http.IqStreamInitializer;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.storage.FsyncPolicy;
import io.iqstream.server.storage.StoreWriter;
import io.iqstream.server.storage.StreamStore;
import io.iqstream.server.stream.DurableStreams;
import io.iqstream.server.metrics.RefusalSummary;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.run.RunSpill;
import io.iqstream.server.warmup.Warmup;
import io.iqstream.server.warmup.WarmupReport;
import io.iqstream.server.worker.Transport;
import io.iqstream.server.worker.Worker;
import io.iqstream.server.worker.Workers;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.PlatformDependent;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import io.iqstream.server.telemetry.Telemetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running server: one worker loop per CPU (each owning the runs hashed to it; the main port's listening socket
 * is registered on one of them, so a connection can be accepted and served without waking another thread), and
 * one more thread ({@code iqstream-accept}) for the optional admin listener ({@code --admin-port}, so a saturated
 * worker never delays a health check) and periodic summaries. {@link #start} binds and returns (or throws
 * {@link StartupFailure} when a port cannot be bound); {@link #drain} and
 * {@link #close} stop it.
 *
 * <p>The acceptor survives {@code EMFILE}: Netty's acceptor pauses accepting for a second on an accept failure
 * and then goes on; and {@code --max-connections} (by default the file limit less a reserve) keeps the process
 * below the file limit so it does not meet it.
 */
public final class IqStreamServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IqStreamServer.class);
    /** Connections a worker accepts per loop turn (Netty's default for a listener, said here on purpose). */
    static final int ACCEPTS_PER_TURN = 16;

    private final ServerContext context;
    private final EventLoopGroup acceptor;
    private final EventLoopGroup workerGroup;
    private final Channel listener;
    private final Channel adminListener;
    private final ConnectionSlots connections;
    private final Transport transport;
    private final WarmupReport warmup;
    private volatile boolean closed;

    private IqStreamServer(ServerContext context, EventLoopGroup acceptor, EventLoopGroup workerGroup,
            Channel listener, Channel adminListener, ConnectionSlots connections, Transport transport,
            WarmupReport warmup) {
        this.context = context;
        this.acceptor = acceptor;
        this.workerGroup = workerGroup;
        this.listener = listener;
        this.adminListener = adminListener;
        this.connections = connections;
        this.transport = transport;
        this.warmup = warmup;
    }

    /** Builds every part from {@code config}, binds, and returns the running server ({@code --demo} as given). */
    public static IqStreamServer start(ServerConfig config) throws InterruptedException {
        return start(config, config.demo().enabled());
    }

    /**
     * As {@link #start(ServerConfig)}, with the demo on or off whatever {@code --demo} says (dev mode turns it on).
     * The demo is installed before the main port accepts its first connection, so {@code /demo} never answers 404
     * on a server started with it.
     */
    public static IqStreamServer start(ServerConfig config, boolean demo) throws InterruptedException {
        Transport transport = Transport.select(config.transport());
        long budgetBytes = MemoryPlan.effectiveBudget(config.memoryBudgetBytes());
        MemoryBudget budget = new MemoryBudget(budgetBytes, config.maxSubscribers() > 0 ? config.maxSubscribers()
                : MemoryBudget.defaultMaxSubscribers(Runtime.getRuntime().maxMemory()));
        Metrics metrics = new Metrics();
        Authorizer authorizer = Authorizer.create(AuthSettings.from(config));
        EventLoopGroup acceptor = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("iqstream-accept"),
                transport.ioHandlerFactory());
        EventLoopGroup workerGroup = new MultiThreadIoEventLoopGroup(config.workers(),
                new DefaultThreadFactory("iqstream-worker"), transport.ioHandlerFactory());
        ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
        Function<IqStreamInitializer, ServerBootstrap> mainPort = initializer -> mainPort(workerGroup, transport,
                allocator, initializer, config.storm().listenBacklog());
        ServerContext context = new ServerContext(config, new Workers(workers(workerGroup, config, budget, metrics,
                allocator)), authorizer, metrics, budget);
        context.telemetry(Telemetry.start(config.tracing()));
        context.cluster(Cluster.start(config, transport.name(), context.replies(), metrics, context.telemetry()));
        StreamStore store = openStore(config, context.workers(), acceptor, workerGroup, context);
        context.durableStreams(new DurableStreams(budget, metrics, context.workers(), config.maxRunBytes(), store,
                config.storage().coldAfterMs()));
        if (store != null) {
            metrics.diskUsedBytes = store::usedBytes;
            metrics.diskBudgetBytes = store::budgetBytes;
            metrics.diskBatches = store::batches;
            metrics.diskRecords = store::records;
            metrics.diskFlushNanos = store::flushNanos;
            metrics.diskQueuedBytes = store::queuedBytes;
            try {
                long runsT0 = System.nanoTime();
                for (int i = 0; i < context.workers().size(); i++) {
                    Worker w = context.workers().get(i);
                    w.registry().spillTo(new RunSpill(store.directory(), store.writer(w.loop()), store::isFull));
                }
                int runs = RunSpill.recover(store.directory(), id -> context.workers().ownerOf(id).registry(),
                        System.currentTimeMillis());
                LOG.info("ended runs on disk: {} held again for the rest of their retention ({} ms)", runs,
                        (System.nanoTime() - runsT0) / 1_000_000);
                int n = context.durableStreams().recover(allocator);
                LOG.info("durable streams on disk in {} (--fsync {}, --disk-budget {} MiB, {} MiB used): {} "
                        + "recovered in {} ms", config.storage().dataDir().toAbsolutePath(),
                        store.fsync().name().toLowerCase(java.util.Locale.ROOT), store.budgetBytes() >> 20,
                        store.usedBytes() >> 20, n, metrics.durableRecoveryMs);
            } catch (IOException e) {
                abandon(context, null, null, acceptor, workerGroup);
                throw StartupFailure.dataDir(e, config.storage().dataDir());
            }
        }
        context.durableStreams().startSweeps();
        int maxConnections = config.maxConnections() > 0 ? config.maxConnections()
                : ConnectionSlots.defaultMax(config.workers() + 1, AdminInitializer.MAX_CONNECTIONS
                        + (store == null ? 0 : config.workers() * openFilesPerWriter(config)));
        ConnectionSlots connections = new ConnectionSlots(maxConnections, metrics.connectionsOpen,
                metrics.connectionsRefusedMax);
        // bound at once (a port in use fails the start now), but accepting only after the warm-up: until then a
        // connection waits in the backlog, and /readyz on the admin port says "warming up"
        ServerBootstrap bootstrap = mainPort.apply(new IqStreamInitializer(context, connections))
                .option(ChannelOption.AUTO_READ, config.warmupRequests() == 0 && !demo);
        Channel listener = null;
        Channel adminListener = null;
        Flag binding = Flag.PORT;
        try {
            listener = bootstrap.bind(config.host(), config.port()).sync().channel();
            binding = Flag.ADMIN_PORT;
            adminListener = bindAdmin(config, acceptor, transport, context);
            if (demo) { // it publishes to the bound port: installed now, accepting from here on
                context.demo(DemoSite.forServer(config, ((InetSocketAddress) listener.localAddress()).getPort(),
                        budgetBytes, metrics));
                listener.config().setAutoRead(config.warmupRequests() == 0);
            }
        } catch (Exception e) {
            abandon(context, listener, null, acceptor, workerGroup);
            if (e instanceof InterruptedException interrupted) {
                throw interrupted;
            }
            throw StartupFailure.listen(e, config.host(),
                    binding == Flag.PORT ? config.port() : config.adminPort(), binding);
        }
        WarmupReport warmup;
        try {
            // a JWKS URL: bound, /readyz 503, until its first usable set; checked before the warm-up, so a key
            // server that cannot answer stops the start within --jwks-timeout, not after the warm-up as well
            authorizer.awaitKeys();
            warmup = warmUp(context, workerGroup, allocator, mainPort);
        } catch (IllegalArgumentException | InterruptedException e) {
            abandon(context, listener, adminListener, acceptor, workerGroup);
            throw e;
        }
        listener.config().setAutoRead(true);
        IqStreamServer server = new IqStreamServer(context, acceptor, workerGroup, listener, adminListener,
                connections, transport, warmup);
        if (context.cluster() != null) {
            context.cluster().begin();
        }
        acceptor.next().scheduleAtFixedRate(new RefusalSummary(metrics), 60, 60, TimeUnit.SECONDS);
        long covered = MemoryPlan.connectionsCovered(Runtime.getRuntime().maxMemory(),
                PlatformDependent.maxDirectMemory(), budgetBytes);
        LOG.info("{} workers, {} transport, auth {}, memory budget {} MiB, max {} connections (file limit {}; the "
                + "memory plan covers {} at their worst, see docs/SECURITY.md)", config.workers(), transport.name(),
                config.authEnabled() ? authorizer.describe() : "OFF", budgetBytes >> 20, maxConnections,
                ConnectionSlots.fileLimit(), covered);
        int somaxconn = somaxconn();
        if (somaxconn > 0 && somaxconn < config.storm().listenBacklog()) {
            LOG.warn("--listen-backlog {} is capped by the kernel's net.core.somaxconn {}: a reconnect storm past it "
                    + "is refused (ListenOverflows in /proc/net/netstat); raise it (sysctl -w net.core.somaxconn={})",
                    config.storm().listenBacklog(), somaxconn, config.storm().listenBacklog());
        }
        if (config.durableStreamsOpen()) {
            LOG.warn("--durable-streams-open: Durable Streams at /v1/stream/ need NO token on {} (loopback only; for "
                    + "the conformance suite and local development)", config.host());
        }
        return server;
    }

    /** One worker per loop of {@code workerGroup}, each with its own run registry. */
    private static List<Worker> workers(EventLoopGroup workerGroup, ServerConfig config, MemoryBudget budget,
            Metrics metrics, ByteBufAllocator allocator) {
        List<Worker> workers = new ArrayList<>();
        int i = 0;
        for (EventExecutor e : workerGroup) {
            EventLoop loop = (EventLoop) e;
            workers.add(new Worker(i++, loop, new RunRegistry(loop, config, budget, metrics, allocator)));
        }
        return workers;
    }

    /** The admin port's listener on the acceptor loop, or null without {@code --admin-port}. */
    private static Channel bindAdmin(ServerConfig config, EventLoopGroup acceptor, Transport transport,
            ServerContext context) throws InterruptedException {
        if (config.adminPort() == ServerConfig.NO_ADMIN_PORT) {
            return null;
        }
        AdminInitializer admin = new AdminInitializer(context);
        return new ServerBootstrap()
                .group(acceptor, acceptor)
                .channel(transport.serverChannelClass())
                .handler(admin.connectionLimit())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(admin)
                .bind(config.host(), config.adminPort()).sync().channel();
    }

    /** The JIT warm-up ({@code --warmup}), with /readyz saying so while it runs. */
    private static WarmupReport warmUp(ServerContext context, EventLoopGroup workerGroup, ByteBufAllocator allocator,
            Function<IqStreamInitializer, ServerBootstrap> mainPort) throws InterruptedException {
        ServerConfig config = context.config();
        if (config.warmupRequests() > 0) {
            LOG.info("warming up: {} requests to itself before the port accepts (a few seconds; --warmup 0 skips "
                    + "it)", config.warmupRequests());
        }
        context.warmingUp(true);
        WarmupReport warmup = Warmup.run(config, workerGroup, allocator, mainPort);
        logWarmup(warmup);
        context.warmingUp(false);
        return warmup;
    }

    /**
     * The main port's listener: it accepts on a worker loop, so a new connection is registered where it was
     * accepted when that loop is the next in turn (always, with one worker), without a hop to another thread (see
     * ARCHITECTURE.md). The warm-up's private listener is made here too, so it exercises the same options.
     */
    private static ServerBootstrap mainPort(EventLoopGroup workerGroup, Transport transport,
            ByteBufAllocator allocator, IqStreamInitializer initializer, int listenBacklog) {
        return new ServerBootstrap()
                .group(workerGroup, workerGroup)
                .handler(initializer.connectionLimit())
                .channel(transport.serverChannelClass())
                // a reconnect storm waits in the kernel's accept queue (--listen-backlog, capped by somaxconn), and
                // is taken from it ACCEPTS_PER_TURN at a time between the worker's other work: connections already
                // served keep their turn while thousands come back at once (StormTest in the bench module)
                .option(ChannelOption.SO_BACKLOG, listenBacklog)
                .option(ChannelOption.RCVBUF_ALLOCATOR,
                        new ServerChannelRecvByteBufAllocator().maxMessagesPerRead(ACCEPTS_PER_TURN))
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, allocator)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(64 * 1024, 256 * 1024))
                // one socket read (at most 64 KiB) per connection per loop turn, not Netty's 16: a publisher
                // flooding a run then costs its worker a bounded slice of each turn, and every other connection
                // of that worker is read in between (HostileFloodTest; issue 31, item 6)
                .childOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator().maxMessagesPerRead(1))
                .childHandler(initializer);
    }

    /** The kernel's cap on a listen backlog, or -1 where it cannot be read (not Linux). */
    private static int somaxconn() {
        try {
            return Integer.parseInt(java.nio.file.Files.readString(java.nio.file.Path.of(
                    "/proc/sys/net/core/somaxconn")).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Undoes a start that failed or was interrupted before the server existed (null listeners: not bound). */
    /**
     * The storage layer of durable streams under {@code --durability disk}, its data directory opened and locked;
     * null under {@code memory}. A directory that cannot be used stops the start with one line naming it.
     */
    private static StreamStore openStore(ServerConfig config, Workers workers, EventLoopGroup acceptor,
            EventLoopGroup workerGroup, ServerContext context) {
        if (!config.storage().onDisk()) {
            return null;
        }
        List<Executor> loops = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            loops.add(workers.get(i).loop());
        }
        try {
            return StreamStore.open(config.storage().dataDir(), FsyncPolicy.parse(config.storage().fsync()), loops,
                    config.storage().diskBudgetBytes(), openFilesPerWriter(config));
        } catch (IOException e) {
            abandon(context, null, null, acceptor, workerGroup);
            throw StartupFailure.dataDir(e, config.storage().dataDir());
        }
    }

    /** Files each storage writer keeps open: a share of the file limit ({@link StoreWriter#openFilesFor}). */
    private static int openFilesPerWriter(ServerConfig config) {
        return StoreWriter.openFilesFor(ConnectionSlots.fileLimit(), config.workers());
    }

    private static void abandon(ServerContext context, Channel listener, Channel adminListener,
            EventLoopGroup acceptor, EventLoopGroup workerGroup) {
        if (listener != null) {
            listener.close();
        }
        if (adminListener != null) {
            adminListener.close();
        }
        acceptor.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        workerGroup.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        if (context.durableStreams() != null) {
            context.durableStreams().closeStore();
        }
        if (context.demo() != null) {
            context.demo().close();
        }
        context.authorizer().close();
        if (context.cluster() != null) {
            context.cluster().close();
        }
        context.telemetry().close();
    }

    private static void logWarmup(WarmupReport r) {
        if (r == WarmupReport.OFF) {
            return;
        }
        if (r.completed()) {
            LOG.info("warmed up in {} ms: {} requests to itself on a private port ({} runs published and read, {} "
                    + "resumes; and {} Durable Streams written and read in {} more); --warmup 0 skips this",
                    r.elapsedMs(), r.requests(), r.runs(), r.resumes(), r.streams(), r.streamRequests());
        } else {
            LOG.warn("warm-up stopped after {} requests in {} ms: {}; starting anyway", r.requests(), r.elapsedMs(),
                    r.failure());
        }
    }

    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** The admin listener's port, or {@link ServerConfig#NO_ADMIN_PORT} when there is none. */
    public int adminPort() {
        return adminListener == null ? ServerConfig.NO_ADMIN_PORT
                : ((InetSocketAddress) adminListener.localAddress()).getPort();
    }

    /** The main port's connection cap ({@code --max-connections} or its default). */
    public int maxConnections() {
        return connections.max();
    }

    /** What the start-up's JIT warm-up did ({@link WarmupReport#OFF} with {@code --warmup 0}). */
    public WarmupReport warmup() {
        return warmup;
    }

    public String transportName() {
        return transport.name();
    }

    public ServerContext context() {
        return context;
    }

    /**
     * Stops taking new runs and waits until the open ones have ended, their publishing requests have been
     * answered and their subscribers have received the end — or until {@code timeoutMs} passes.
     */
    public void drain(long timeoutMs) throws InterruptedException {
        context.startDraining();
        endAwaiting();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        Metrics m = context.metrics();
        while (true) {
            int open = openRuns();
            long publishers = m.publishersActive.sum();
            long subscribers = m.subscribersActive.sum();
            if (open == 0 && publishers == 0 && subscribers == 0) {
                LOG.info("drained: no open runs, publishers or subscribers");
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                LOG.warn("drain timeout: {} runs still open, {} publishers, {} subscribers", open, publishers,
                        subscribers);
                return;
            }
            Thread.sleep(50);
        }
    }

    /** Answers every subscriber still waiting for a run 503 draining, on each worker's own loop. */
    private void endAwaiting() {
        Workers ws = context.workers();
        for (int i = 0; i < ws.size(); i++) {
            Worker w = ws.get(i);
            CompletableFuture<Void> f = new CompletableFuture<>();
            w.loop().execute(() -> {
                try {
                    w.registry().endAwaiting();
                } finally {
                    f.complete(null);
                }
            });
            f.join();
        }
    }

    /** Open (not ended) runs on all workers, counted on each worker's own loop. */
    public int openRuns() {
        int total = 0;
        Workers ws = context.workers();
        for (int i = 0; i < ws.size(); i++) {
            Worker w = ws.get(i);
            CompletableFuture<Integer> f = new CompletableFuture<>();
            w.loop().execute(() -> f.complete(w.registry().openRuns()));
            total += f.join();
        }
        return total;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        listener.close().syncUninterruptibly();
        if (adminListener != null) {
            adminListener.close().syncUninterruptibly();
        }
        if (context.demo() != null) {
            context.demo().close();
        }
        Workers ws = context.workers();
        for (int i = 0; i < ws.size(); i++) {
            Worker w = ws.get(i);
            if (!w.loop().isShuttingDown()) {
                w.loop().submit(() -> w.registry().dropAll()).syncUninterruptibly();
            }
        }
        // then every connection closed on its own loop while the loops still run (after the runs' streams were ended
        // above), so each pipeline sees its close and releases what it holds: a loop shutting down closes only the
        // channels registered on it at that moment and ends after its last tasks, which left connections open
        // (Netty's leak detector found publishers' and readers' buffers after a flood test's close)
        connections.closeAll(5_000);
        acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        workerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        if (context.durableStreams() != null) {
            context.durableStreams().dropAll();
            context.durableStreams().closeStore();
        }
        context.authorizer().close();
        if (context.cluster() != null) {
            context.cluster().close();
        }
        context.telemetry().close();
    }
}
