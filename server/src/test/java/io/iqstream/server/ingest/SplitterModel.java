package io.iqstream.server.ingest;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.iqstream.server.admission.MemoryBudget;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * For the fuzz tests: runs a splitter over a body cut at chunk points the fuzzer chooses (as {@link PublishSession}
 * would: size cap and {@link EventValidator} per event), and computes what a simple reference model says the body
 * holds (Jackson tree parsing of each line, frame or element; Java's strict UTF-8 decoder). They must agree on the
 * events taken and on whether and where the body was refused; no exception escapes, bytes held stay under the cap,
 * every buffer and every byte charged to the budget is given back.
 */
final class SplitterModel {
    /** How a body ended. */
    enum End {
        COMPLETE,
        OVERSIZE,
        REFUSED
    }

    /** Events taken (hex, to compare bytes) and how the body ended. */
    record Outcome(List<String> events, End end) {
        @Override
        public String toString() {
            return end + " after " + events;
        }
    }

    private static final ObjectMapper TREE = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final JsonFactory DEEP = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(100_000).build()).build();

    private SplitterModel() {
    }

    /** An allocator that remembers every buffer it gave out, to prove each was released. */
    static final class TrackingAllocator extends AbstractByteBufAllocator {
        final List<ByteBuf> given = new ArrayList<>();

        TrackingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.heapBuffer(initialCapacity, maxCapacity);
            given.add(b);
            return b;
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
            given.add(b);
            return b;
        }

        @Override
        public boolean isDirectBufferPooled() {
            return true;
        }
    }

    /** Consumes a cap, chunk sizes and a body from the fuzzer, runs both, and fails if they disagree. */
    static void check(String contentType, FuzzedDataProvider data) {
        int cap = data.consumeInt(1, 96);
        int[] sizes = new int[data.consumeInt(1, 8)];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = data.consumeInt(1, 64);
        }
        byte[] body = data.consumeRemainingAsBytes();
        check(contentType, cap, sizes, body);
    }

    static void check(String contentType, int cap, int[] sizes, byte[] body) {
        compare(contentType, cap, cap, sizes, body);
    }

    /** The splitter with {@code cap} against the model with {@code modelCap} (equal, except to test the harness). */
    static void compare(String contentType, int cap, int modelCap, int[] sizes, byte[] body) {
        Outcome actual = run(contentType, cap, sizes, body);
        Outcome expected = switch (contentType) {
            case "application/x-ndjson" -> ndjson(body, modelCap);
            case "text/event-stream" -> sse(body, modelCap);
            default -> json(body, modelCap);
        };
        boolean same = actual.events().equals(expected.events()) && (actual.end() == expected.end()
                || actual.end() != End.COMPLETE && expected.end() != End.COMPLETE && jsonMayDiffer(contentType));
        if (!same) {
            throw new AssertionError(contentType + " cap " + cap + " chunks " + Arrays.toString(sizes) + " body "
                    + HexFormat.of().formatHex(body) + ": splitter " + actual + ", model " + expected);
        }
    }

    /** A malformed JSON element longer than the cap is 413 or 400 depending on which is noticed first. */
    private static boolean jsonMayDiffer(String contentType) {
        return contentType.equals("application/json");
    }

    /** The splitter, as {@link PublishSession} drives it. */
    static Outcome run(String contentType, int cap, int[] sizes, byte[] body) {
        TrackingAllocator allocator = new TrackingAllocator();
        MemoryBudget budget = new MemoryBudget(1L << 30);
        EventSplitter splitter = EventSplitter.forContentType(contentType, cap, allocator, budget);
        EventValidator validator = new EventValidator();
        List<String> events = new ArrayList<>();
        End[] end = {End.COMPLETE};
        EventSink sink = new EventSink() {
            @Override
            public boolean onEvent(ByteBuf json) {
                if (json.readableBytes() > cap) {
                    end[0] = End.OVERSIZE;
                    return false;
                }
                EventCheck c = validator.check(json);
                if (c != EventCheck.OK && c != EventCheck.OK_TERMINAL) {
                    end[0] = End.REFUSED;
                    return false;
                }
                events.add(io.netty.buffer.ByteBufUtil.hexDump(json));
                return true;
            }

            @Override
            public void onOversizeEvent() {
                end[0] = End.OVERSIZE;
            }

            @Override
            public void onOverBudget() {
                throw new AssertionError("a 1 GiB budget refused a partial event");
            }

            @Override
            public void onBadEvent(String message) {
                end[0] = End.REFUSED;
            }

            @Override
            public void onFramingError(String message) {
                end[0] = End.REFUSED;
            }

            @Override
            public void onKeepAlive() {
            }
        };
        try {
            boolean go = true;
            int at = 0;
            for (int i = 0; go && at < body.length; i++) {
                int n = Math.min(sizes[i % sizes.length], body.length - at);
                ByteBuf chunk = allocator.directBuffer(n).writeBytes(body, at, n);
                at += n;
                try {
                    go = splitter.feed(chunk, sink);
                } finally {
                    chunk.release();
                }
                if (splitter.heldBytes() > cap + 1) {
                    throw new AssertionError("holds " + splitter.heldBytes() + " bytes, cap " + cap);
                }
            }
            if (go) {
                splitter.finish(sink);
            }
        } finally {
            splitter.release();
            splitter.release();
        }
        for (ByteBuf b : allocator.given) {
            if (b.refCnt() != 0) {
                throw new AssertionError("buffer not released: " + b);
            }
        }
        if (budget.committedBytes() != 0) {
            throw new AssertionError("budget not given back: " + budget.committedBytes());
        }
        return new Outcome(events, end[0]);
    }

    private static byte[] withoutBom(byte[] body) {
        if (body.length >= 3 && (body[0] & 0xFF) == 0xEF && (body[1] & 0xFF) == 0xBB && (body[2] & 0xFF) == 0xBF) {
            return Arrays.copyOfRange(body, 3, body.length);
        }
        return body;
    }

    /** Reference: is this one valid event? (strict UTF-8, one JSON object, exactly one string "type"). */
    static boolean validEvent(byte[] json) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(json));
        } catch (CharacterCodingException e) {
            return false;
        }
        try {
            JsonNode tree = TREE.readTree(asUtf8(json));
            if (tree == null || !tree.isObject() || !tree.path("type").isTextual()) {
                return false;
            }
            int types = 0;
            try (JsonParser p = TREE.getFactory().createParser(asUtf8(json))) {
                p.nextToken();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    if (p.currentName().equals("type")) {
                        types++;
                    }
                    p.nextToken();
                    p.skipChildren();
                }
            }
            return types == 1;
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The event behind two spaces, so that Jackson reads it as UTF-8 as the server does (it would otherwise guess
     * UTF-16/32 from zero bytes and skip a byte order mark at the start).
     */
    private static byte[] asUtf8(byte[] json) {
        byte[] spaced = new byte[json.length + 2];
        spaced[0] = ' ';
        spaced[1] = ' ';
        System.arraycopy(json, 0, spaced, 2, json.length);
        return spaced;
    }

    /** The "type" of a valid event (reference parser). */
    static String typeOf(byte[] json) {
        try {
            return TREE.readTree(json).path("type").asText();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reference verdict on one candidate event: taken, or the end it causes. */
    private static End judge(byte[] event, int cap, List<String> events) {
        if (event.length > cap) {
            return End.OVERSIZE;
        }
        if (!validEvent(event)) {
            return End.REFUSED;
        }
        events.add(HexFormat.of().formatHex(event));
        return null;
    }

    static Outcome ndjson(byte[] raw, int cap) {
        byte[] body = withoutBom(raw);
        List<String> events = new ArrayList<>();
        int start = 0;
        while (start < body.length) {
            int lf = start;
            while (lf < body.length && body[lf] != '\n') {
                lf++;
            }
            int end = lf;
            if (end > start && body[end - 1] == '\r') {
                end--;
            }
            byte[] line = Arrays.copyOfRange(body, start, end);
            if (line.length > cap) {
                return new Outcome(events, End.OVERSIZE);
            }
            if (!blank(line)) {
                End e = judge(line, cap, events);
                if (e != null) {
                    return new Outcome(events, e);
                }
            }
            start = lf + 1;
        }
        return new Outcome(events, End.COMPLETE);
    }

    private static boolean blank(byte[] line) {
        for (byte b : line) {
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    static Outcome sse(byte[] raw, int cap) {
        byte[] body = withoutBom(raw);
        List<String> events = new ArrayList<>();
        java.io.ByteArrayOutputStream frame = new java.io.ByteArrayOutputStream();
        boolean hasData = false;
        int start = 0;
        while (start <= body.length) {
            int lf = start;
            while (lf < body.length && body[lf] != '\n') {
                lf++;
            }
            if (lf == body.length && start == body.length) {
                break; // no unterminated last line
            }
            int end = lf;
            if (end > start && body[end - 1] == '\r') {
                end--;
            }
            byte[] line = Arrays.copyOfRange(body, start, end);
            if (line.length == 0) {
                if (hasData) {
                    End e = judge(frame.toByteArray(), cap, events);
                    if (e != null) {
                        return new Outcome(events, e);
                    }
                }
                hasData = false;
                frame.reset();
            } else if (line.length >= 4 && line[0] == 'd' && line[1] == 'a' && line[2] == 't' && line[3] == 'a'
                    && (line.length == 4 || line[4] == ':')) {
                int v = Math.min(line.length, 5);
                if (v < line.length && line[v] == ' ') {
                    v++;
                }
                if (hasData) {
                    frame.write('\n');
                }
                frame.write(line, v, line.length - v);
                hasData = true;
                if (frame.size() > cap + 1) {
                    return new Outcome(events, End.OVERSIZE);
                }
            }
            start = lf + 1;
        }
        if (hasData) {
            End e = judge(frame.toByteArray(), cap, events);
            if (e != null) {
                return new Outcome(events, e);
            }
        }
        return new Outcome(events, End.COMPLETE);
    }

    static Outcome json(byte[] raw, int cap) {
        // read as UTF-8, as the server does: Jackson would otherwise take zero bytes for UTF-16/32 ("\0[\0]" is an
        // empty array in UTF-16BE; the fuzzer found it)
        byte[] body = asUtf8(withoutBom(raw));
        List<String> events = new ArrayList<>();
        try (JsonParser p = DEEP.createParser(body)) {
            JsonToken t = p.nextToken();
            if (t == JsonToken.START_OBJECT) {
                long from = p.currentTokenLocation().getByteOffset();
                p.skipChildren();
                End e = judge(Arrays.copyOfRange(body, (int) from, (int) p.currentLocation().getByteOffset()), cap,
                        events);
                if (e != null) {
                    return new Outcome(events, e);
                }
            } else if (t == JsonToken.START_ARRAY) {
                while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                    if (t != JsonToken.START_OBJECT) {
                        return new Outcome(events, End.REFUSED);
                    }
                    long from = p.currentTokenLocation().getByteOffset();
                    p.skipChildren();
                    End e = judge(Arrays.copyOfRange(body, (int) from, (int) p.currentLocation().getByteOffset()),
                            cap, events);
                    if (e != null) {
                        return new Outcome(events, e);
                    }
                }
            } else {
                return new Outcome(events, End.REFUSED);
            }
            if (p.nextToken() != null) {
                return new Outcome(events, End.REFUSED);
            }
        } catch (java.io.IOException | RuntimeException e) {
            return new Outcome(events, End.REFUSED);
        }
        return new Outcome(events, End.COMPLETE);
    }

    /** For unit tests: a body as one chunk and byte by byte must give the model's outcome. */
    static void checkAllChunkings(String contentType, int cap, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        check(contentType, cap, new int[] {Math.max(1, b.length)}, b);
        check(contentType, cap, new int[] {1}, b);
        check(contentType, cap, new int[] {2, 3, 5}, b);
    }

    static ByteBuf wrap(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }
}
