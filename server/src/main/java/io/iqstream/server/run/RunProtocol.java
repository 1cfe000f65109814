package io.iqstream.server.run;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;

/**
 * The protocol a run's events are written in: chosen once, by the request that creates the run, and fixed for
 * the run's life. Everything that differs between protocols is here and nowhere else: which events end the run
 * (its terminal rule), the events the server writes when it ends a run itself (publisher lost, idle, stopped),
 * and how a reader's SSE response is framed around the run's events (extra headers, a last line after the last
 * event). Ingest, the registry and the SSE stream ask the run's protocol; the relay path itself (splitting,
 * validation, the log, fan-out) is the same bytes for both.
 *
 * <ul>
 *   <li>{@link #AG_UI}: AG-UI events. {@code RUN_FINISHED} and {@code RUN_ERROR} end the run; the server's own
 *       ends are a {@code RUN_ERROR} with a {@code code} ({@code PUBLISHER_LOST}, {@code RUN_IDLE},
 *       {@code STOPPED}); readers get plain {@code text/event-stream}.</li>
 *   <li>{@link #UI_MESSAGE_STREAM}: the Vercel AI SDK's UI message stream (v1), declared by the creating POST's
 *       {@code x-vercel-ai-ui-message-stream: v1} header (the header the AI SDK's own responses carry). Each chunk
 *       is one event; the data line {@code [DONE]} ends the run without being an event, and so does the body's end
 *       right after a {@code finish}, {@code abort} or {@code error} chunk (NDJSON and JSON have no {@code [DONE]}: a
 *       line {@code [DONE]} there is 400 {@code bad_event}, as any other non-object). The
 *       server's own ends are an {@code abort} chunk (stopped) or an {@code error} chunk (publisher lost, idle);
 *       readers get the {@code x-vercel-ai-ui-message-stream: v1} header and {@code data: [DONE]} after the run's
 *       last event, as the AI SDK's {@code JsonToSseTransformStream} writes it.</li>
 * </ul>
 *
 * <p>Immutable; any thread.
 */
public enum RunProtocol {
    AG_UI("ag-ui", types("RUN_FINISHED", "RUN_ERROR"), types(), null, null) {
        @Override
        public String serverEndEvent(String code, String message, long nowMs) {
            return "{\"type\":\"RUN_ERROR\",\"message\":\"" + message + "\",\"code\":\"" + code
                    + "\",\"timestamp\":" + nowMs + "}";
        }
    },
    UI_MESSAGE_STREAM("ui-message-stream", types(), types("finish", "abort", "error"), "[DONE]",
            "data: [DONE]\n\n") {
        @Override
        public String serverEndEvent(String code, String message, long nowMs) {
            // a stop is the AI SDK's own abort (useChat shows a stopped answer); the rest are errors
            return STOPPED.equals(code) ? "{\"type\":\"abort\",\"reason\":\"" + message + " (" + code + ")\"}"
                    : "{\"type\":\"error\",\"errorText\":\"" + message + " (" + code + ")\"}";
        }

        @Override
        public void readerHeaders(HttpHeaders headers) {
            headers.set(UI_MESSAGE_STREAM_HEADER, UI_MESSAGE_STREAM_VERSION);
        }
    };

    /** The header that declares a UI message stream (the AI SDK's {@code UI_MESSAGE_STREAM_HEADERS}). */
    public static final String UI_MESSAGE_STREAM_HEADER = "x-vercel-ai-ui-message-stream";
    /** The one version of the UI message stream there is. */
    public static final String UI_MESSAGE_STREAM_VERSION = "v1";
    /** The code of a stop ({@code DELETE /v1/runs/{id}}). */
    public static final String STOPPED = "STOPPED";

    private final String label;
    private final byte[][] terminalTypes;
    private final byte[][] closingTypes;
    private final byte[] endMarker;
    private final ByteBuf readerTrailer;

    RunProtocol(String label, byte[][] terminalTypes, byte[][] closingTypes, String endMarker, String trailer) {
        this.label = label;
        this.terminalTypes = terminalTypes;
        this.closingTypes = closingTypes;
        this.endMarker = endMarker == null ? null : endMarker.getBytes(StandardCharsets.US_ASCII);
        this.readerTrailer = trailer == null ? null : Unpooled.unreleasableBuffer(Unpooled.directBuffer(
                trailer.length()).writeBytes(trailer.getBytes(StandardCharsets.US_ASCII))).asReadOnly();
    }

    private static byte[][] types(String... names) {
        byte[][] out = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            out[i] = names[i].getBytes(StandardCharsets.US_ASCII);
        }
        return out;
    }

    /**
     * The protocol a publishing request declares: {@link #UI_MESSAGE_STREAM} with
     * {@code x-vercel-ai-ui-message-stream: v1}, {@link #AG_UI} without the header; null for another version
     * (400 {@code unsupported_protocol}).
     */
    public static RunProtocol declaredBy(HttpHeaders headers) {
        String v = headers.get(UI_MESSAGE_STREAM_HEADER);
        if (v == null) {
            return AG_UI;
        }
        // exactly v1 (the AI SDK's own value): not V1, not v1.0; only the spaces and tabs HTTP allows around any
        // field value (RFC 9110 5.5) are not part of it
        return UI_MESSAGE_STREAM_VERSION.equals(trimOws(v)) ? UI_MESSAGE_STREAM : null;
    }

    /** {@code v} without leading and trailing spaces and tabs (HTTP's optional whitespace). */
    private static String trimOws(String v) {
        int from = 0;
        int to = v.length();
        while (from < to && (v.charAt(from) == ' ' || v.charAt(from) == '\t')) {
            from++;
        }
        while (to > from && (v.charAt(to - 1) == ' ' || v.charAt(to - 1) == '\t')) {
            to--;
        }
        return v.substring(from, to);
    }

    /** The name in status replies and docs: {@code ag-ui} or {@code ui-message-stream}. */
    public String label() {
        return label;
    }

    /** Event types that end the run when appended (compared after unescaping). */
    public byte[][] terminalTypes() {
        return terminalTypes;
    }

    /** Event types that end the run when the publishing body ends right after them. */
    public byte[][] closingTypes() {
        return closingTypes;
    }

    /** The data that ends the run without being an event ({@code [DONE]}), or null when there is none. */
    public byte[] endMarker() {
        return endMarker;
    }

    /**
     * The event the server appends when it ends a run itself: {@code code} is {@code PUBLISHER_LOST},
     * {@code RUN_IDLE} or {@link #STOPPED}; {@code message} is a constant with no character JSON must escape.
     */
    public abstract String serverEndEvent(String code, String message, long nowMs);

    /** Adds this protocol's headers to a reader's SSE response (beyond Content-Type). */
    public void readerHeaders(HttpHeaders headers) {
    }

    /**
     * Bytes every reader is sent after the run's last event, before its response ends (a shared read-only buffer:
     * write a duplicate), or null when there are none.
     */
    public ByteBuf readerTrailer() {
        return readerTrailer;
    }
}
