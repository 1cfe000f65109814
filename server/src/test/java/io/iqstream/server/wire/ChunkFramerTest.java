package io.iqstream.server.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A chunk of the log goes out as one buffer (size line, copied data, CRLF) when it is small and nothing waits on
 * the connection, so the socket gets a {@code send} instead of a {@code writev} of three; otherwise as the log's
 * own slice between its framing (no copy). Either way the bytes are the same chunk and the log's slice is released.
 */
class ChunkFramerTest {
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    private ChannelHandlerContext below() {
        return channel.pipeline().firstContext();
    }

    private static ByteBuf slice(String text) {
        return PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The buffers the last flush handed to the transport, in order (each released after it is read). */
    private List<String> flushed() {
        channel.flush();
        List<String> out = new ArrayList<>();
        for (Object m; (m = channel.readOutbound()) != null;) {
            ByteBuf b = (ByteBuf) m;
            out.add(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return out;
    }

    @Test
    void aSmallChunkOnAnIdleConnectionIsOneBuffer() {
        String frame = "id: 7\ndata: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"delta\":\"hi\"}\n\n";
        ByteBuf data = slice(frame);
        ChunkFramer.of().write(below(), data);
        assertEquals(0, data.refCnt(), "the log's slice is released once copied");
        assertEquals(List.of(Integer.toHexString(frame.length()) + "\r\n" + frame + "\r\n"), flushed(),
                "one buffer: size line, frame, CRLF");
    }

    @Test
    void aChunkBehindUnsentBytesOrAboveTheCopyLimitGoesOutAsTheLogsOwnSlice() {
        ByteBuf first = slice("id: 1\ndata: {}\n\n");
        ByteBuf second = slice("id: 2\ndata: {}\n\n");
        ChunkFramer.of().write(below(), first);
        ChunkFramer.of().write(below(), second); // the first is still waiting: no copy
        assertEquals(1, second.refCnt(), "not copied: the write holds the slice itself");
        assertEquals(List.of("10\r\nid: 1\ndata: {}\n\n\r\n", "10\r\n", "id: 2\ndata: {}\n\n", "\r\n"), flushed());

        String large = "id: 3\ndata: {\"type\":\"TOOL_CALL_RESULT\",\"content\":\"" + "x".repeat(ChunkFramer.COPY_BYTES)
                + "\"}\n\n";
        ByteBuf big = slice(large);
        ChunkFramer.of().write(below(), big);
        channel.flush();
        ByteBuf sizeLine = channel.readOutbound();
        assertEquals(Integer.toHexString(large.length()) + "\r\n", sizeLine.toString(StandardCharsets.UTF_8));
        sizeLine.release();
        ByteBuf middle = channel.readOutbound();
        assertSame(big, middle, "above the copy limit the log's own slice is written");
        middle.release();
        assertEquals(List.of("\r\n"), flushed());
    }
}
