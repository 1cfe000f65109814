package io.iqstream.micro;

import io.iqstream.server.ServerContext;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.RunRegistry;
import io.iqstream.server.sse.SubscriberStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.util.Map;
import org.openjdk.jmh.infra.Blackhole;

/**
 * One worker's relay without sockets: the server's own {@link RunRegistry} (with the default configuration:
 * packed log segments, shared unpacked copies, the memory budget) on an {@link EmbeddedChannel}'s loop, and
 * subscriber connections that are {@link EmbeddedChannel}s with the HTTP response encoder, so a
 * {@link SubscriberStream} writes through the same encoder (chunked transfer encoding) as on a socket and what it
 * writes ends up in the channel's outbound queue, where {@link #drain} takes and releases it as the socket would.
 * What is left out: HTTP request decoding, authorization, the hand-off to the worker, the kernel.
 *
 * <p>Confined to the benchmark thread (every embedded loop is "in the loop" on any thread).
 */
final class RelayFixture {
    /** The budget: large enough that no benchmark is refused. */
    private static final long BUDGET_BYTES = 1L << 30;
    private static final int MAX_SUBSCRIBERS = 10_000;

    private final ServerConfig config;
    private final ServerContext server;
    private final RunRegistry registry;
    private final EmbeddedChannel workerLoop = new EmbeddedChannel();

    /** {@code flags}: server flags on top of the defaults (e.g. {@code --compress-log false}). */
    RelayFixture(String... flags) {
        config = ConfigParser.parse(flags, Map.of());
        MemoryBudget budget = new MemoryBudget(BUDGET_BYTES, MAX_SUBSCRIBERS);
        Metrics metrics = new Metrics();
        server = new ServerContext(config, null, null, metrics, budget);
        registry = new RunRegistry(workerLoop.eventLoop(), config, budget, metrics, WorkloadEvents.ALLOCATOR);
    }

    ServerConfig config() {
        return config;
    }

    RunRegistry registry() {
        return registry;
    }

    /** A new subscriber connection: a channel whose pipeline ends in the HTTP response encoder. */
    static SubscriberChannel connect() {
        SubscriberChannel endpoint = new SubscriberChannel();
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.config().setAllocator(WorkloadEvents.ALLOCATOR);
        channel.pipeline().addLast("http", new HttpResponseEncoder()).addLast("relay", endpoint);
        return endpoint;
    }

    /** A subscribe request on {@code channel} for {@code runId} resuming after {@code lastEventId}; started. */
    SubscriberStream subscribe(SubscriberChannel channel, String runId, long lastEventId) {
        HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET,
                "/v1/runs/" + runId + "/events");
        SubscriberStream stream = new SubscriberStream(channel.ctx, request, server, registry, runId, lastEventId,
                true);
        stream.start();
        return stream;
    }

    /** Takes everything written and flushed to {@code channel}, consumes and releases it; returns the bytes. */
    static long drain(SubscriberChannel channel, Blackhole bh) {
        long bytes = 0;
        Object m;
        while ((m = channel.channel.readOutbound()) != null) {
            if (m instanceof io.netty.buffer.ByteBuf b) {
                bytes += b.readableBytes();
            }
            bh.consume(m);
            ReferenceCountUtil.release(m);
        }
        return bytes;
    }

    /** Drops every run and closes the loop. */
    void close() {
        registry.dropAll();
        workerLoop.finishAndReleaseAll();
    }

    /** The last handler of a subscriber connection: the context a {@link SubscriberStream} writes through. */
    static final class SubscriberChannel extends ChannelInboundHandlerAdapter {
        private ChannelHandlerContext ctx;
        private EmbeddedChannel channel;

        @Override
        public void handlerAdded(ChannelHandlerContext context) {
            this.ctx = context;
            this.channel = (EmbeddedChannel) context.channel();
        }

        void close() {
            channel.finishAndReleaseAll();
        }
    }
}
