package io.iqstream.server.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.ServerContext;
import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.Metrics;
import io.iqstream.server.run.Run;
import io.iqstream.server.run.RunRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A resume far back into a packed run flushes its first segment's frames before it reads (unpacks) the rest, and
 * the replay, written in shares of later loop turns, is byte for byte the one a plain log gives.
 */
class ReplayFirstFlushTest {
    private static final int EVENTS = 600;

    /** The bytes each flush let through, as text (the encoder's output, HTTP/1.0: no chunk framing). */
    private static final class FlushRecorder extends ChannelOutboundHandlerAdapter {
        final List<String> flushed = new ArrayList<>();
        private final StringBuilder pending = new StringBuilder();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof ByteBuf b) {
                pending.append(b.toString(StandardCharsets.UTF_8));
            }
            ReferenceCountUtil.release(msg);
            promise.trySuccess();
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            if (!pending.isEmpty()) {
                flushed.add(pending.toString());
                pending.setLength(0);
            }
        }
    }

    private static String replay(String compressLog, List<String> flushesOut) {
        ServerConfig config = ConfigParser.parse(new String[] {"--compress-log", compressLog}, Map.of());
        MemoryBudget budget = new MemoryBudget(64L << 20, 100);
        Metrics metrics = new Metrics();
        ServerContext server = new ServerContext(config, null, null, metrics, budget);
        EmbeddedChannel loop = new EmbeddedChannel();
        RunRegistry registry = new RunRegistry(loop.eventLoop(), config, budget, metrics,
                PooledByteBufAllocator.DEFAULT);
        Run run = registry.create("r");
        for (int i = 1; i <= EVENTS; i++) {
            String json = i == EVENTS ? "{\"type\":\"RUN_FINISHED\"}"
                    : "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"word " + i + "\"}";
            ByteBuf b = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
            registry.append(run, b, i == EVENTS);
            b.release();
        }
        assertTrue(run.isEnded());
        FlushRecorder recorder = new FlushRecorder();
        ChannelInboundHandlerAdapter endpoint = new ChannelInboundHandlerAdapter();
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.pipeline().addLast(recorder).addLast(new HttpResponseEncoder()).addLast("relay", endpoint);
        SubscriberStream stream = new SubscriberStream(channel.pipeline().context("relay"),
                new DefaultHttpRequest(HttpVersion.HTTP_1_0, HttpMethod.GET, "/v1/runs/r/events"), server, registry,
                "r", 0, false);
        stream.start();
        // the replay beyond the first segment goes out in shares of later loop turns (CatchUpTurns)
        for (int turn = 0; turn < 1_000 && !stream.isDone(); turn++) {
            channel.runScheduledPendingTasks();
        }
        assertTrue(stream.isDone(), "the whole ended run replayed");
        boolean segments = run.log().lastIdInSegmentOf(1) < EVENTS / 2; // a plain log seals into one buffer
        flushesOut.addAll(recorder.flushed);
        channel.finishAndReleaseAll();
        registry.dropAll();
        loop.finishAndReleaseAll();
        assertEquals(0, budget.committedBytes() - budget.tombstoneBytes(), "every byte given back");
        assertTrue(segments || compressLog.equals("false"), "the packed run spans several segments");
        String all = String.join("", recorder.flushed);
        return all.substring(all.indexOf("id: 1\n"));
    }

    @Test
    void aPackedReplayFlushesItsFirstSegmentBeforeUnpackingTheRest() {
        List<String> flushes = new ArrayList<>();
        String packed = replay("true", flushes);
        assertTrue(flushes.size() >= 2, "more than one flush: " + flushes.size());
        String first = flushes.get(0);
        assertTrue(first.startsWith("HTTP/1.0 200") && first.contains("retry: ") && first.contains("id: 1\n"),
                "head, retry and the first frames: " + first.substring(0, Math.min(200, first.length())));
        assertTrue(!first.contains("id: " + EVENTS + "\n"), "not the whole replay in the first flush");
        String plain = replay("false", new ArrayList<>());
        assertEquals(plain, packed, "the packed replay is byte for byte the plain one");
    }
}
