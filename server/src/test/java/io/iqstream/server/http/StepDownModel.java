package io.iqstream.server.http;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The reference model of {@link ChunkedBodyReader}: the same bytes, cut into the same reads, through Netty's
 * {@link HttpServerCodec} alone and through the step-down before it (stepping down on every plainly chunked POST,
 * as the server does on a publish), must give the same trace — each request head, its body's bytes, its end with
 * its trailers, each decoder failure (its exception class and message), each refusal, and what a close says — and
 * release every buffer.
 *
 * <p>The recorder acts as {@link HttpRequestHandler} does: a request to {@code /v1/runs/elsewhere} is handed to
 * another worker, so it pauses the step-down and holds what reaches it until the hand-off ends (after a read the
 * stream chooses, or at the close), then replays it and resumes the step-down; a head with a transfer coding other
 * than chunked is refused (501) and nothing after it is served. The heads generated include those where request
 * smuggling lives: {@code Content-Length} with {@code Transfer-Encoding}, {@code gzip, chunked}, chunked on
 * HTTP/1.0, duplicated or misordered {@code Transfer-Encoding}, and requests pipelined behind a hand-off. Used by
 * {@code ChunkedBodyReaderTest} (seeded streams) and {@code ChunkedBodyReaderFuzzTest} (Jazzer).
 */
final class StepDownModel {
    /** The bytes random streams are made of: hex digits, line ends, what extensions and trailers hold. */
    private static final String ODD = "0123456789abcdefABCDEF\r\n;= \t\"xyz:0";

    private StepDownModel() {}

    /** The trace of {@code stream} cut at {@code cuts} (ascending offsets), with or without the step-down. */
    static List<String> trace(byte[] stream, int[] cuts, boolean stepDown) {
        return trace(stream, cuts, 0, stepDown);
    }

    /**
     * As above; a hand-off in progress ends after read {@code i} when bit {@code i % 64} of {@code arrivals} is set
     * (and always at the close).
     */
    static List<String> trace(byte[] stream, int[] cuts, long arrivals, boolean stepDown) {
        Recorder recorder = new Recorder();
        ChunkedBodyReader reader = stepDown ? new ChunkedBodyReader() : null;
        recorder.reader = reader;
        EmbeddedChannel ch = stepDown
                ? new EmbeddedChannel(reader, codec(), recorder)
                : new EmbeddedChannel(codec(), recorder);
        List<ByteBuf> inputs = new ArrayList<>();
        int from = 0;
        for (int i = 0; i <= cuts.length; i++) {
            int to = i < cuts.length ? cuts[i] : stream.length;
            if (to > from) {
                ByteBuf read = Unpooled.directBuffer(to - from).writeBytes(stream, from, to - from);
                inputs.add(read);
                ch.writeInbound(read.retain());
                from = to;
            }
            if ((arrivals >>> (i % 64) & 1) != 0) {
                recorder.arrive();
            }
        }
        while (recorder.holding) {
            recorder.arrive();
        }
        ch.finish();
        recorder.flushData();
        recorder.trace.add("CLOSED");
        for (ByteBuf read : inputs) {
            if (read.refCnt() != 1) {
                recorder.trace.add("LEAK refCnt " + read.refCnt());
            }
            read.release();
        }
        return recorder.trace;
    }

    /** The server's codec, with its limits (IqStreamInitializer). */
    private static HttpServerCodec codec() {
        return new HttpServerCodec(IqStreamInitializer.MAX_INITIAL_LINE_BYTES, IqStreamInitializer.MAX_HEADER_BYTES,
                64 * 1024);
    }

    /** Asserts both traces agree for {@code stream} cut at {@code cuts}. */
    static void check(byte[] stream, int[] cuts) {
        check(stream, cuts, 0);
    }

    /** Asserts both traces agree for {@code stream} cut at {@code cuts}, hand-offs ending per {@code arrivals}. */
    static void check(byte[] stream, int[] cuts, long arrivals) {
        List<String> codecAlone = trace(stream, cuts, arrivals, false);
        List<String> steppedDown = trace(stream, cuts, arrivals, true);
        if (!codecAlone.equals(steppedDown)) {
            throw new AssertionError("the step-down changed what the body decodes to\nstream: "
                    + HexFormat.of().formatHex(stream) + "\ncuts: " + java.util.Arrays.toString(cuts)
                    + "\narrivals: " + Long.toBinaryString(arrivals)
                    + "\ncodec alone: " + codecAlone + "\nstepped down: " + steppedDown);
        }
    }

    /** A stream of requests the fuzzer shapes (heads, chunked bodies in any form, damage), and its cuts. */
    static void check(FuzzedDataProvider data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int requests = data.consumeInt(1, 4);
        for (int r = 0; r < requests && data.remainingBytes() > 0; r++) {
            request(out, data.consumeInt(0, KINDS - 1), data.consumeBoolean(), () -> data.consumeInt(0, 300),
                    () -> data.consumeBytes(data.consumeInt(0, 40)), () -> data.consumeInt(0, 15));
        }
        byte[] stream = out.toByteArray();
        if (stream.length > 0 && data.consumeBoolean()) {
            byte[] damage = data.consumeBytes(data.consumeInt(1, 4));
            int at = data.consumeInt(0, stream.length - 1);
            System.arraycopy(damage, 0, stream, at, Math.min(damage.length, stream.length - at));
        }
        int[] cuts = cuts(stream.length, () -> data.consumeInt(0, Math.max(0, stream.length)),
                data.consumeInt(0, 12));
        check(stream, cuts, data.consumeLong());
    }

    /** A stream from {@code random}: the same shapes as the fuzzer's. */
    static void check(Random random) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int requests = 1 + random.nextInt(4);
        for (int r = 0; r < requests; r++) {
            request(out, random.nextInt(KINDS), random.nextBoolean(), () -> random.nextInt(random.nextBoolean() ? 20 : 300),
                    () -> {
                        byte[] b = new byte[random.nextInt(40)];
                        for (int i = 0; i < b.length; i++) {
                            b[i] = (byte) ODD.charAt(random.nextInt(ODD.length()));
                        }
                        return b;
                    }, () -> random.nextInt(16));
        }
        byte[] stream = out.toByteArray();
        if (stream.length > 0 && random.nextInt(3) == 0) {
            int at = random.nextInt(stream.length);
            stream[at] = (byte) ODD.charAt(random.nextInt(ODD.length()));
        }
        check(stream, cuts(stream.length, () -> random.nextInt(stream.length + 1), random.nextInt(12)),
                random.nextLong());
    }

    private interface IntSource {
        int next();
    }

    private interface BytesSource {
        byte[] next();
    }

    /** Request kinds {@link #request} makes. */
    static final int KINDS = 16;

    /**
     * One request: {@code kind} 0-5 a chunked POST with body chunks in plain form (sizes from {@code size}, some in
     * upper-case hex, with leading zeros, with extensions or odd bytes per {@code shape}); 6 with trailers; 7 a GET;
     * 8 a POST with Content-Length; 9 raw bytes; 10 a chunked POST with Content-Length too; 11 with
     * {@code Transfer-Encoding: gzip, chunked}; 12 chunked on HTTP/1.0; 13 with {@code Transfer-Encoding} twice or
     * misordered; 14 a GET handed to another worker; 15 a chunked POST handed to another worker.
     */
    private static void request(ByteArrayOutputStream out, int kind, boolean keepAlive, IntSource size,
            BytesSource raw, IntSource shape) {
        String connection = keepAlive ? "" : "Connection: close\r\n";
        if (kind == 7 || kind == 14) {
            write(out, "GET /v1/runs/" + (kind == 14 ? "elsewhere" : "r") + "/events HTTP/1.1\r\nHost: x\r\n"
                    + connection + "\r\n");
            return;
        }
        if (kind == 8) {
            byte[] body = raw.next();
            write(out, "POST /v1/runs/r/events HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n"
                    + connection + "\r\n");
            out.writeBytes(body);
            return;
        }
        if (kind == 9) {
            out.writeBytes(raw.next());
            return;
        }
        String framing = switch (kind) {
            case 10 -> "Content-Length: " + size.next() + "\r\nTransfer-Encoding: chunked\r\n";
            case 11 -> "Transfer-Encoding: gzip, chunked\r\n";
            case 13 -> switch (shape.next() % 4) {
                case 0 -> "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n";
                case 1 -> "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n";
                case 2 -> "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n";
                default -> "Transfer-Encoding: chunked, chunked\r\n";
            };
            default -> "Transfer-Encoding: chunked\r\n";
        };
        write(out, "POST /v1/runs/" + (kind == 15 ? "elsewhere" : "r") + "/events HTTP/1." + (kind == 12 ? "0" : "1")
                + "\r\nHost: x\r\n" + framing + connection + "\r\n");
        int chunks = shape.next() % 6;
        for (int c = 0; c < chunks; c++) {
            int n = size.next();
            int form = shape.next();
            String hex = Integer.toHexString(n);
            String line = switch (form) {
                case 0 -> hex.toUpperCase(java.util.Locale.ROOT);
                case 1 -> "0" + hex;
                case 2 -> hex + ";ext=1";
                case 3 -> hex + " ;e";
                case 4 -> new String(raw.next(), StandardCharsets.ISO_8859_1);
                default -> hex;
            };
            write(out, line + (form == 5 ? "\n" : "\r\n"));
            byte[] d = new byte[n];
            byte[] fill = raw.next();
            for (int i = 0; i < n; i++) {
                d[i] = fill.length == 0 ? (byte) ('a' + i % 26) : fill[i % fill.length];
            }
            out.writeBytes(d);
            write(out, form == 6 ? "\n" : form == 7 ? "X\r\n" : "\r\n");
        }
        write(out, kind == 6 ? "0\r\nX-Trailer: t\r\nY: " + new String(raw.next(), StandardCharsets.ISO_8859_1)
                + "\r\n\r\n" : shape.next() == 0 ? "0;last\r\n\r\n" : "0\r\n\r\n");
    }

    private static int[] cuts(int length, IntSource at, int count) {
        int[] cuts = new int[count];
        for (int i = 0; i < count; i++) {
            cuts[i] = Math.min(length, at.next());
        }
        java.util.Arrays.sort(cuts);
        return cuts;
    }

    private static void write(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * Records what reaches the handlers; steps down on a plainly chunked POST when it has a reader; holds what
     * comes while a hand-off is in progress, and refuses what the server refuses, as {@link HttpRequestHandler}.
     */
    private static final class Recorder extends ChannelInboundHandlerAdapter implements ChunkedBodyReader.Sink {
        final List<String> trace = new ArrayList<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        final ArrayDeque<Object> held = new ArrayDeque<>();
        ChunkedBodyReader reader;
        /** A hand-off is in progress: what arrives is held. */
        boolean holding;
        /** A refused head: nothing after it is served (the connection closes). */
        boolean refused;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (holding) {
                held.add(msg);
                return;
            }
            handle(msg);
        }

        /** The hand-off ends: what was held is served, then the step-down goes on. */
        void arrive() {
            holding = false;
            while (!holding && !held.isEmpty()) {
                handle(held.poll());
            }
            if (!holding && reader != null) {
                reader.readOnDemand(); // the handed-off publish begins on its worker (if it is stepped down)
                reader.resume();
            }
        }

        private void handle(Object msg) {
            try {
                if (refused) {
                    return;
                }
                if (msg instanceof ByteBuf data) {
                    body.writeBytes(bytes(data));
                    return;
                }
                if (msg instanceof HttpRequest request) {
                    flushData();
                    trace.add(request.decoderResult().isFailure() ? "BAD HEAD " + failure(request.decoderResult()
                            .cause()) : "REQUEST " + request.method() + " " + request.uri());
                    if (request.decoderResult().isSuccess() && RequestFraming.hasOtherCoding(request)) {
                        trace.add("REFUSED 501");
                        refused = true;
                        return;
                    }
                    if (reader != null && request.decoderResult().isSuccess()
                            && request.method().equals(HttpMethod.POST)
                            && RequestFraming.isPlainChunked(request)) {
                        reader.stepDown(this);
                    }
                    if (request.decoderResult().isSuccess() && request.uri().startsWith("/v1/runs/elsewhere/")) {
                        holding = true;
                        if (reader != null) {
                            reader.pause();
                        }
                    } else if (reader != null) {
                        reader.readOnDemand(); // as the server's publish, served here: nothing if not stepped down
                    }
                }
                if (msg instanceof HttpContent content) {
                    if (content.decoderResult().isFailure()) {
                        flushData();
                        trace.add("BAD BODY " + failure(content.decoderResult().cause()));
                        return;
                    }
                    if (reader != null && reader.isSteppedDown()) {
                        trace.add("VIOLATION: the codec decoded content of a stepped-down body");
                    }
                    body.writeBytes(bytes(content.content()));
                    if (content instanceof LastHttpContent last) {
                        flushData();
                        StringBuilder t = new StringBuilder("END");
                        for (Map.Entry<String, String> h : last.trailingHeaders()) {
                            t.append(' ').append(h.getKey()).append('=').append(h.getValue());
                        }
                        trace.add(t.toString());
                    }
                }
            } finally {
                io.netty.util.ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void bodyData(ByteBuf data) {
            channelRead(null, data);
        }

        @Override
        public void bodyReadComplete() {
        }

        void flushData() {
            if (body.size() > 0) {
                trace.add("DATA " + HexFormat.of().formatHex(body.toByteArray()));
                body.reset();
            }
        }

        /**
         * A decoder failure's class and message. For the JDK's own runtime exceptions the class only: once hot,
         * the JIT throws a preallocated one without a message, so the same failure of Netty's code (its
         * {@code decodeHexNibble} on a size line byte of 0x80 or more: an ArrayIndexOutOfBoundsException the
         * codec turns into a failed chunk) reads with a message in one pipeline and without in the other.
         */
        private static String failure(Throwable cause) {
            if (cause == null) {
                return "null";
            }
            String name = cause.getClass().getSimpleName();
            boolean jdkRuntime = cause instanceof IndexOutOfBoundsException || cause instanceof NullPointerException
                    || cause instanceof ClassCastException || cause instanceof ArithmeticException
                    || cause instanceof ArrayStoreException;
            return jdkRuntime ? name : name + ": " + cause.getMessage();
        }

        private static byte[] bytes(ByteBuf b) {
            byte[] a = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), a);
            return a;
        }
    }
}
