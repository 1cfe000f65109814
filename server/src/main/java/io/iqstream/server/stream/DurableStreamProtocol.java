package io.iqstream.server.stream;

import io.iqstream.server.json.JsonValues;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The rules of the Durable Streams protocol (PROTOCOL.md of github.com/durable-streams/durable-streams, as its
 * conformance suite {@code @durable-streams/server-conformance-tests} 0.3.6 reads it), beside
 * {@code run.RunProtocol}'s AG-UI and UI-message-stream rules: the header and parameter names, the offset format,
 * which content types are JSON mode or SSE-as-text, how a JSON append is cut into messages, how SSE data is
 * framed, the cursor of a live read and the CORS headers a browser client needs. Everything here is a pure
 * function of its arguments.
 *
 * <p>Offsets are {@code <16 digits>_<16 digits>}: a read sequence (always 0 here) and the byte position in the
 * stream after a message (a fork's positions continue its parent's). Clients treat them as opaque and compare
 * them as strings, which the fixed width keeps in byte order.
 *
 * <p>Immutable; any thread.
 */
public final class DurableStreamProtocol {
    /** The path prefix the protocol is served under (the conformance suite hard-codes it). */
    public static final String PATH_PREFIX = "/v1/stream/";

    // header names as AsciiString: hashed once, and copied into an encoded head as bytes
    public static final AsciiString NEXT_OFFSET = AsciiString.cached("Stream-Next-Offset");
    public static final AsciiString UP_TO_DATE = AsciiString.cached("Stream-Up-To-Date");
    public static final AsciiString CURSOR = AsciiString.cached("Stream-Cursor");
    public static final AsciiString CLOSED = AsciiString.cached("Stream-Closed");
    public static final AsciiString TTL = AsciiString.cached("Stream-TTL");
    public static final AsciiString EXPIRES_AT = AsciiString.cached("Stream-Expires-At");
    public static final AsciiString SEQ = AsciiString.cached("Stream-Seq");
    public static final AsciiString FORKED_FROM = AsciiString.cached("Stream-Forked-From");
    public static final AsciiString FORK_OFFSET = AsciiString.cached("Stream-Fork-Offset");
    public static final AsciiString FORK_SUB_OFFSET = AsciiString.cached("Stream-Fork-Sub-Offset");
    public static final AsciiString SSE_DATA_ENCODING = AsciiString.cached("Stream-SSE-Data-Encoding");
    public static final AsciiString PRODUCER_ID = AsciiString.cached("Producer-Id");
    public static final AsciiString PRODUCER_EPOCH = AsciiString.cached("Producer-Epoch");
    public static final AsciiString PRODUCER_SEQ = AsciiString.cached("Producer-Seq");
    public static final AsciiString PRODUCER_EXPECTED_SEQ = AsciiString.cached("Producer-Expected-Seq");
    public static final AsciiString PRODUCER_RECEIVED_SEQ = AsciiString.cached("Producer-Received-Seq");

    /** Methods a browser may send ({@code Access-Control-Allow-Methods}). */
    public static final String CORS_METHODS = "GET, POST, PUT, DELETE, HEAD, OPTIONS";
    /** Request headers a browser may send ({@code Access-Control-Allow-Headers}). */
    public static final String CORS_ALLOW_HEADERS = "Authorization, Content-Type, If-None-Match, Stream-Seq, "
            + "Stream-TTL, Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, "
            + "Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset";
    /** Response headers a browser's script may read ({@code Access-Control-Expose-Headers}). */
    public static final String CORS_EXPOSE_HEADERS = "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, "
            + "Stream-Closed, Stream-TTL, Stream-Expires-At, Stream-SSE-Data-Encoding, Producer-Epoch, Producer-Seq, "
            + "Producer-Expected-Seq, Producer-Received-Seq, ETag, Content-Type, Location";

    /** The content type of a stream created without one. */
    public static final String DEFAULT_CONTENT_TYPE = "application/octet-stream";

    /** The cursor's interval and epoch (the reference server's: 20 s intervals since 2024-10-09T00:00Z). */
    static final long CURSOR_INTERVAL_MS = 20_000;
    static final long CURSOR_EPOCH_MS = 1_728_432_000_000L;

    private static final Pattern OFFSET = Pattern.compile("\\d{1,19}_\\d{1,19}");
    private static final Pattern NON_NEGATIVE = Pattern.compile("0|[1-9]\\d{0,17}");
    private static final Pattern DIGITS = Pattern.compile("\\d{1,18}");
    private static final Pattern MEDIA_TYPE = Pattern.compile("^[\\w.+-]+/[\\w.+-]+.*");


    private DurableStreamProtocol() {
    }

    /** The offset of byte position {@code position}: {@code 0000000000000000_<position, 16 digits>}. */
    public static String offset(long position) {
        String digits = Long.toString(position);
        StringBuilder sb = new StringBuilder(33).append("0000000000000000_");
        for (int i = digits.length(); i < 16; i++) {
            sb.append('0');
        }
        return sb.append(digits).toString();
    }

    /**
     * The byte position an offset names, {@code -1} for {@code -1} (the stream's start), or {@link Long#MIN_VALUE}
     * when it is not an offset ({@code now} is the caller's business).
     */
    public static long position(String offset) {
        if (offset.equals("-1")) {
            return -1;
        }
        if (!OFFSET.matcher(offset).matches()) {
            return Long.MIN_VALUE;
        }
        int cut = offset.indexOf('_');
        try {
            long seq = Long.parseLong(offset, 0, cut, 10);
            long pos = Long.parseLong(offset, cut + 1, offset.length(), 10);
            return seq == 0 ? pos : Long.MIN_VALUE;
        } catch (NumberFormatException e) {
            return Long.MIN_VALUE;
        }
    }

    /** A TTL header value: seconds, or -1 when malformed (leading zeros, signs, fractions, exponents). */
    public static long ttlSeconds(String value) {
        return NON_NEGATIVE.matcher(value).matches() ? Long.parseLong(value) : -1;
    }

    /** A producer epoch or sequence number: a non-negative integer, or -1 when malformed. */
    public static long producerNumber(String value) {
        return DIGITS.matcher(value).matches() ? Long.parseLong(value) : -1;
    }

    /** The media type without parameters, lower case; "" for none. */
    public static String mediaType(String contentType) {
        if (contentType == null) {
            return "";
        }
        int semi = contentType.indexOf(';');
        return (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }

    /** Whether a Content-Type header names a media type at all ({@code type/subtype}). */
    public static boolean isMediaType(String contentType) {
        return contentType != null && MEDIA_TYPE.matcher(contentType.trim()).matches();
    }

    /** JSON mode: the stream's messages are JSON values, read back as one array. */
    public static boolean isJson(String contentType) {
        return mediaType(contentType).equals("application/json");
    }

    /** Whether SSE carries this type's bytes as text; every other type is base64 in SSE. */
    public static boolean isSseText(String contentType) {
        String t = mediaType(contentType);
        return t.startsWith("text/") || t.equals("application/json");
    }

    /**
     * Where the values of a JSON append lie in {@code body}: a top-level array contributes its elements (one
     * level flattened), any other value itself; as {@code [start, end)} byte pairs, each value's bytes exactly as
     * sent (nothing re-serialised: numbers keep every digit). Null when the body is not one well-formed JSON
     * value; an empty array for {@code []}.
     */
    public static int[] jsonValueRanges(byte[] body, int length) {
        return JsonValues.ranges(body, length);
    }


    private static final byte[] DATA_EVENT = "event: data\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTROL_EVENT = "event: control\ndata:{\"streamNextOffset\":\""
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "data:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CURSOR_FIELD = "\",\"streamCursor\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] UP_TO_DATE_END = "\",\"upToDate\":true}\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OPEN_END = "\"}\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLOSED_END = "\",\"streamClosed\":true}\n\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * Writes one SSE data event for {@code message} (its readable bytes, not consumed): a JSON stream's values as
     * one array, a text stream's bytes line by line (CR, LF and CRLF each end a line), any other type base64.
     */
    public static void writeDataEvent(ByteBuf out, ByteBuf message, boolean json, boolean base64) {
        out.writeBytes(DATA_EVENT);
        int from = message.readerIndex();
        int to = message.writerIndex();
        if (base64) {
            out.writeBytes(DATA);
            ByteBuf encoded = io.netty.handler.codec.base64.Base64.encode(message, from, to - from, false);
            out.writeBytes(encoded);
            encoded.release();
            out.writeByte('\n').writeByte('\n');
            return;
        }
        out.writeBytes(DATA);
        if (json) {
            out.writeByte('[');
        }
        int start = from;
        for (int i = from; i < to; i++) {
            byte b = message.getByte(i);
            if (b == '\r' || b == '\n') {
                out.writeBytes(message, start, i - start).writeByte('\n').writeBytes(DATA);
                if (b == '\r' && i + 1 < to && message.getByte(i + 1) == '\n') {
                    i++;
                }
                start = i + 1;
            }
        }
        out.writeBytes(message, start, to - start);
        if (json) {
            out.writeByte(']');
        }
        out.writeByte('\n').writeByte('\n');
    }

    /**
     * Writes one SSE control event: the offset after {@code position}, then {@code streamClosed} when the stream
     * is closed there, else the cursor and {@code upToDate} when at the tail.
     */
    public static void writeControlEvent(ByteBuf out, long position, boolean closed, String cursor,
            boolean upToDate) {
        out.writeBytes(CONTROL_EVENT);
        writeOffset(out, position);
        if (closed) {
            out.writeBytes(CLOSED_END);
            return;
        }
        out.writeBytes(CURSOR_FIELD);
        out.writeCharSequence(cursor, StandardCharsets.US_ASCII);
        out.writeBytes(upToDate ? UP_TO_DATE_END : OPEN_END);
    }

    /** Writes {@link #offset}'s text for {@code position} without making a string. */
    public static void writeOffset(ByteBuf out, long position) {
        out.writeBytes(OFFSET_PREFIX);
        int at = out.writerIndex();
        out.writeZero(16);
        long v = position;
        for (int i = 15; i >= 0 && v > 0; i--) {
            out.setByte(at + i, (int) ('0' + v % 10));
            v /= 10;
        }
        for (int i = 0; i < 16; i++) {
            if (out.getByte(at + i) == 0) {
                out.setByte(at + i, '0');
            }
        }
    }

    private static final byte[] OFFSET_PREFIX = "0000000000000000_".getBytes(StandardCharsets.US_ASCII);

    /**
     * The cursor of a live read's answer: the current 20 s interval since the epoch; when the client's cursor is
     * already at or past it (a cached answer coming round again), moved on by a random jitter of 1 s to 1 h, so
     * a CDN never serves the same long-poll answer in a loop.
     */
    public static String cursor(String clientCursor, long nowMs, long random) {
        long current = Math.floorDiv(nowMs - CURSOR_EPOCH_MS, CURSOR_INTERVAL_MS);
        if (clientCursor == null || !DIGITS.matcher(clientCursor).matches()) {
            return Long.toString(current);
        }
        long client = Long.parseLong(clientCursor);
        if (client < current) {
            return Long.toString(current);
        }
        long jitterSeconds = 1 + Math.floorMod(random, 3600);
        long intervals = Math.max(1, (jitterSeconds * 1000 + CURSOR_INTERVAL_MS - 1) / CURSOR_INTERVAL_MS);
        return Long.toString(client + intervals);
    }

    /** The strong ETag of a catch-up read: the path, where it began and ended, and closure when it ended there. */
    public static String etag(String path, String from, String next, boolean closed) {
        return "\"" + Base64.getEncoder().encodeToString(path.getBytes(StandardCharsets.UTF_8)) + ":" + from + ":"
                + next + (closed ? ":c" : "") + "\"";
    }

    /** Adds the headers every Durable Streams answer carries (content sniffing off, cross-origin reads allowed). */
    public static void securityHeaders(HttpHeaders headers) {
        headers.set(CONTENT_TYPE_OPTIONS, NOSNIFF);
        headers.set(RESOURCE_POLICY, CROSS_ORIGIN);
    }

    private static final AsciiString CONTENT_TYPE_OPTIONS = AsciiString.cached("X-Content-Type-Options");
    private static final AsciiString NOSNIFF = AsciiString.cached("nosniff");
    private static final AsciiString RESOURCE_POLICY = AsciiString.cached("Cross-Origin-Resource-Policy");
    private static final AsciiString CROSS_ORIGIN = AsciiString.cached("cross-origin");
}
