package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The step-down ({@link ChunkedBodyReader}) decodes what Netty's codec alone decodes ({@link StepDownModel}):
 * named cases for each path (data chunks read below the codec, the last chunk and trailers handed back, an
 * extension handed back mid-body, a bad delimiter, a pipelined request after the body, every cut of one body, a
 * publish pipelined behind a request handed to another worker, the heads where smuggling lives, a body that asks
 * for its reads itself), then 2,000
 * seeded random streams of every kind (the fuzz test goes on from there).
 */
class ChunkedBodyReaderTest {
    private static final String HEAD = "POST /v1/runs/r/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

    @Test
    void dataChunksComeThroughTheStepDownAndTheEndThroughTheCodec() {
        byte[] s = bytes(HEAD + "5\r\nhello\r\n1A\r\n" + "x".repeat(26) + "\r\n0\r\nX-T: v\r\n\r\n");
        List<String> trace = StepDownModel.trace(s, new int[0], true);
        assertEquals(List.of("REQUEST POST /v1/runs/r/events", "DATA " + hex("hello" + "x".repeat(26)),
                "END X-T=v", "CLOSED"), trace);
        StepDownModel.check(s, new int[0]);
    }

    /**
     * A body read on demand asks for each socket read from the step-down's own context, with autoRead off: no read
     * walks back from the pipeline's tail while the body streams (with autoRead on, Netty asks after every read
     * from the tail, through every handler). Once the body ends autoRead is on again and the request after it is
     * read as any other.
     */
    @Test
    void aBodyReadOnDemandAsksForItsReadsBelowTheHandlers() {
        ReadCounter nearHead = new ReadCounter();
        ReadCounter nearTail = new ReadCounter();
        ChunkedBodyReader reader = new ChunkedBodyReader();
        List<String> seen = new ArrayList<>();
        ChunkedBodyReader.Sink sink = new ChunkedBodyReader.Sink() {
            @Override
            public void bodyData(ByteBuf data) {
                seen.add(data.toString(StandardCharsets.US_ASCII));
                data.release();
            }

            @Override
            public void bodyReadComplete() {
            }
        };
        ChannelInboundHandlerAdapter handler = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest request) {
                    seen.add(request.method() + " " + request.uri());
                    if (request.method().equals(HttpMethod.POST) && reader.stepDown(sink)) {
                        reader.readOnDemand();
                    }
                }
                if (msg instanceof LastHttpContent) {
                    seen.add("END");
                }
                ReferenceCountUtil.release(msg);
            }
        };
        EmbeddedChannel ch = new EmbeddedChannel(nearHead, reader, new HttpServerCodec(), handler, nearTail);
        int tailBefore = nearTail.reads; // the channel's first read, at its activation
        int headBefore = nearHead.reads;
        ch.writeInbound(Unpooled.copiedBuffer(HEAD, StandardCharsets.US_ASCII));
        for (String chunk : List.of("5\r\nhello\r\n", "3\r\nabc\r\n", "2\r\nok\r\n")) {
            ch.writeInbound(Unpooled.copiedBuffer(chunk, StandardCharsets.US_ASCII));
        }
        assertEquals(0, nearTail.reads - tailBefore, "reads asked from the pipeline's tail while the body streamed");
        assertEquals(4, nearHead.reads - headBefore, "reads asked by the step-down: one per socket read (the head's included)");
        assertTrue(!ch.config().isAutoRead(), "autoRead is off while the body is read on demand");
        ch.writeInbound(Unpooled.copiedBuffer("0\r\n\r\nGET /v1/runs/r HTTP/1.1\r\nHost: x\r\n\r\n",
                StandardCharsets.US_ASCII));
        assertTrue(ch.config().isAutoRead(), "autoRead is on again once the body ended");
        assertTrue(nearTail.reads > tailBefore, "the request after the body is read as any other");
        assertEquals(List.of("POST /v1/runs/r/events", "hello", "abc", "ok", "END", "GET /v1/runs/r", "END"), seen);
        ch.finishAndReleaseAll();
    }

    /** Counts the reads asked through it (an outbound handler at its place in the pipeline). */
    private static final class ReadCounter extends ChannelOutboundHandlerAdapter {
        int reads;

        @Override
        public void read(ChannelHandlerContext ctx) {
            reads++;
            ctx.read();
        }
    }

    @Test
    void everyCutOfABodyDecodesTheSame() {
        byte[] s = bytes(HEAD + "3\r\nabc\r\n10\r\n0123456789abcdef\r\n4;e=1\r\nwxyz\r\n2\r\nok\r\n0\r\n\r\n"
                + "GET /v1/runs/r HTTP/1.1\r\nHost: x\r\n\r\n");
        for (int a = 0; a <= s.length; a++) {
            for (int b = a; b <= s.length; b += 7) {
                StepDownModel.check(s, new int[] {a, b});
            }
        }
    }

    @Test
    void aBadDelimiterIsTheCodecsOwnError() {
        byte[] s = bytes(HEAD + "3\r\nabcX\r\n0\r\n\r\n");
        List<String> trace = StepDownModel.trace(s, new int[0], true);
        assertTrue(trace.stream().anyMatch(t -> t.startsWith("BAD BODY InvalidChunkTerminationException")),
                trace.toString());
        StepDownModel.check(s, new int[0]);
        StepDownModel.check(s, new int[] {HEAD.length() + 6});
        // one wrong byte and then the close: the codec waits for the second byte, so it is a closure mid-body
        StepDownModel.check(bytes(HEAD + "3\r\nabcX"), new int[0]);
        StepDownModel.check(bytes(HEAD + "3\r\nabc\r"), new int[0]);
    }

    @Test
    void oddSizeLinesGoToTheCodec() {
        for (String line : List.of("03", "0003", "A", "a ;x", "3;", "3\n", "12345678", "fffffff", "ffffffff", "-3",
                "3 ", " 3", "", ";")) {
            byte[] s = bytes(HEAD + line + "\r\nabc\r\n0\r\n\r\n");
            StepDownModel.check(s, new int[0]);
            StepDownModel.check(s, new int[] {HEAD.length() + 1});
        }
    }

    @Test
    void aPublishPipelinedBehindAHandOffDecodesAsTheCodecDoes() {
        // issue 31: a request handed to another worker, a chunked publish behind it in the same read; the codec
        // must not decode the publish's body before its head is served (a size line cut by the read was read as
        // the wrong size: 400 on a valid body; a partial chunk reached the handler as codec content: 500)
        String moved = "GET /v1/runs/elsewhere/events HTTP/1.1\r\nHost: x\r\n\r\n";
        String body = "1c\r\n{\"type\":\"RUN_STARTED\",\"a\":1}\r\n0\r\n\r\n";
        byte[] s = bytes(moved + HEAD + body + "GET /v1/runs/r HTTP/1.1\r\nHost: x\r\n\r\n");
        List<String> trace = StepDownModel.trace(s, new int[] {moved.length() + HEAD.length() + 1}, 0b1, true);
        assertEquals(List.of("REQUEST GET /v1/runs/elsewhere/events", "END", "REQUEST POST /v1/runs/r/events",
                "DATA " + hex("{\"type\":\"RUN_STARTED\",\"a\":1}"), "END", "REQUEST GET /v1/runs/r", "END",
                "CLOSED"), trace);
        for (long arrivals : new long[] {0, 1, 0b10, 0b101, -1L}) {
            for (int a = 0; a <= s.length; a++) {
                StepDownModel.check(s, new int[] {a}, arrivals);
                StepDownModel.check(s, new int[] {a, Math.min(s.length, a + 5)}, arrivals);
            }
        }
        // the moved request a chunked publish itself, another behind it
        String movedPost = HEAD.replace("/v1/runs/r/", "/v1/runs/elsewhere/");
        byte[] t = bytes(movedPost + body + HEAD + body);
        for (int a = 0; a <= t.length; a++) {
            StepDownModel.check(t, new int[] {a}, 0b1);
            StepDownModel.check(t, new int[] {a}, 0);
        }
    }

    @Test
    void theHeadsWhereSmugglingLivesDecodeTheSame() {
        String body = "3\r\nabc\r\n0\r\n\r\nGET /v1/runs/r HTTP/1.1\r\nHost: x\r\n\r\n";
        for (String framing : List.of("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
                "Transfer-Encoding: chunked\r\nContent-Length: 40\r\n", "Transfer-Encoding: gzip, chunked\r\n",
                "Transfer-Encoding: chunked, gzip\r\n", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked, chunked\r\n",
                "Transfer-Encoding: identity\r\n", "Transfer-Encoding: Chunked\r\n", "Transfer-Encoding:  chunked \r\n")) {
            for (String version : List.of("1.1", "1.0")) {
                byte[] s = bytes("POST /v1/runs/r/events HTTP/" + version + "\r\nHost: x\r\n" + framing + "\r\n" + body);
                for (int a = 0; a <= s.length; a += 3) {
                    StepDownModel.check(s, new int[] {a});
                }
            }
        }
        List<String> gzip = StepDownModel.trace(bytes("POST /v1/runs/r/events HTTP/1.1\r\nHost: x\r\n"
                + "Transfer-Encoding: gzip, chunked\r\n\r\n" + body), new int[0], true);
        assertEquals(List.of("REQUEST POST /v1/runs/r/events", "REFUSED 501", "CLOSED"), gzip);
    }

    @Test
    void randomStreamsDecodeTheSame() {
        for (int seed = 0; seed < 2_000; seed++) {
            StepDownModel.check(new Random(seed));
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String hex(String s) {
        return java.util.HexFormat.of().formatHex(bytes(s));
    }
}
