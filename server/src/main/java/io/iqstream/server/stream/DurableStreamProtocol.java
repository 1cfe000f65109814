package io.iqstream.server.stream;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
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

    public static final String NEXT_OFFSET = "Stream-Next-Offset";
    public static final String UP_TO_DATE = "Stream-Up-To-Date";
    public static final String CURSOR = "Stream-Cursor";
    public static final String CLOSED = "Stream-Closed";
    public static final String TTL = "Stream-TTL";
    public static final String EXPIRES_AT = "Stream-Expires-At";
    public static final String SEQ = "Stream-Seq";
    public static final String FORKED_FROM = "Stream-Forked-From";
    public static final String FORK_OFFSET = "Stream-Fork-Offset";
    public static final String FORK_SUB_OFFSET = "Stream-Fork-Sub-Offset";
    public static final String SSE_DATA_ENCODING = "Stream-SSE-Data-Encoding";
    public static final String PRODUCER_ID = "Producer-Id";
    public static final String PRODUCER_EPOCH = "Producer-Epoch";
    public static final String PRODUCER_SEQ = "Producer-Seq";
    public static final String PRODUCER_EXPECTED_SEQ = "Producer-Expected-Seq";
    public static final String PRODUCER_RECEIVED_SEQ = "Producer-Received-Seq";

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

    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS).build();

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
     * The values of a JSON append, each re-serialised compactly: a top-level array contributes its elements (one
     * level flattened), any other value itself. Null when the body is not one well-formed JSON value; an empty
     * list for {@code []}.
     */
    public static List<byte[]> jsonValues(byte[] body) {
        JsonNode node;
        try (JsonParser p = JSON.createParser(body)) {
            node = JSON.readTree(p);
            if (node == null || p.nextToken() != null) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
        List<byte[]> out = new ArrayList<>();
        try {
            if (node.isArray()) {
                for (JsonNode element : node) {
                    out.add(JSON.writeValueAsBytes(element));
                }
            } else {
                out.add(JSON.writeValueAsBytes(node));
            }
        } catch (IOException e) {
            return null;
        }
        return out;
    }

    /** Writes an SSE event: {@code event: <type>} and one {@code data:} line per line of {@code payload}. */
    public static void sseEvent(StringBuilder sb, String type, CharSequence payload) {
        sb.append("event: ").append(type).append('\n');
        int start = 0;
        int n = payload.length();
        for (int i = 0; i < n; i++) {
            char c = payload.charAt(i);
            if (c == '\r' || c == '\n') {
                sb.append("data:").append(payload, start, i).append('\n');
                if (c == '\r' && i + 1 < n && payload.charAt(i + 1) == '\n') {
                    i++;
                }
                start = i + 1;
            }
        }
        sb.append("data:").append(payload, start, n).append("\n\n");
    }

    /** A data event's payload as SSE carries it: the bytes as UTF-8 text, or base64 for a binary type. */
    public static String ssePayload(byte[] bytes, boolean base64) {
        return base64 ? Base64.getEncoder().encodeToString(bytes) : new String(bytes, StandardCharsets.UTF_8);
    }

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
        headers.set("X-Content-Type-Options", "nosniff");
        headers.set("Cross-Origin-Resource-Policy", "cross-origin");
    }
}
