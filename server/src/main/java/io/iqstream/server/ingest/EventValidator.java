package io.iqstream.server.ingest;

import io.iqstream.server.json.JsonScanner;
import io.iqstream.server.json.Utf8;
import io.iqstream.server.run.RunProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.Arrays;

/**
 * Checks that an event is well-formed UTF-8 and one well-formed JSON object with exactly one string {@code type}
 * (a duplicate is refused: parsers disagree on which one wins), and tells apart the events that end a run in its
 * protocol ({@link RunProtocol}: terminal and closing types, the {@code [DONE]} end marker). One instance per
 * publishing connection; not thread-safe. An event in a direct buffer is copied into its thread's scratch array
 * (one per thread, shared by every validator on it, kept up to {@value #KEPT_SCRATCH_BYTES}; a larger event gets
 * an array of its own for that check), so an idle publisher holds no copy of its largest event: before, each kept
 * a scratch array grown to it for the connection's life (8 KiB of heap per publisher after a WORKLOAD.md run's
 * tool result, up to {@code --max-event-bytes}; {@code RunInFlightFootprintTest}). A check allocates nothing
 * unless it fails (then the reason, {@link #lastError()}, is a new string) or its event is larger than the kept
 * scratch.
 *
 * <p>Implementation notes. The check is a single pass over the bytes: {@link Utf8#firstInvalid} first, then a
 * strict RFC 8259 syntax scan that builds nothing ({@link JsonScanner}). It takes exactly what Jackson's streaming
 * parser (the reference, with its default features and stream read constraints) takes from UTF-8 input, and gives the same
 * {@link EventCheck} in the same order as walking its tokens would: nesting up to 1000 levels, numbers up to 1000
 * digits, names up to 50,000 bytes, no comments, no leading zeros, control characters only escaped, any
 * {@code \\uXXXX} in a value (a lone surrogate included) but only paired surrogate escapes in a member name, and
 * only ASCII right after {@code true}, {@code false} or {@code null}. Names and the {@code type} value are
 * compared after unescaping: {@code "typ\\u0065"} is {@code type}, {@code "RUN_\\u0046INISHED"} is terminal. The
 * one difference on purpose: Jackson guesses UTF-16/32 from zero bytes and skips a byte order mark at the start of
 * its input; events are UTF-8 and relayed as they came, so here a NUL or a BOM is an error like any other
 * stray byte. {@code EventValidatorDifferentialTest} and {@code EventValidatorFuzzTest} hold it to the reference;
 * {@code RelayAllocationTest} shows the relay path's allocation per event.
 */
public final class EventValidator {
    private static final byte[] TYPE = {'t', 'y', 'p', 'e'};
    private final byte[][] terminalTypes;
    private final byte[][] closingTypes;
    private final byte[] endMarker;

    /** The largest scratch array a thread keeps between checks. */
    static final int KEPT_SCRATCH_BYTES = 64 * 1024;
    private static final FastThreadLocal<byte[][]> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[][] initialValue() {
            return new byte[][] {new byte[1024]};
        }
    };

    private String lastError = "";
    private final JsonScanner scan = new JsonScanner();

    /** A validator of AG-UI events. */
    public EventValidator() {
        this(RunProtocol.AG_UI);
    }

    /** A validator whose terminal, closing and end-marker verdicts follow {@code protocol} (an SSE body's). */
    public EventValidator(RunProtocol protocol) {
        this(protocol, true);
    }

    /**
     * As above; {@code sseBody}: the events come from an SSE body. The end marker ({@code [DONE]}) is an SSE data
     * line only: in an NDJSON or JSON body it is no event and no end, but what any other non-object is
     * ({@link EventCheck#NOT_AN_OBJECT}: 400 {@code bad_event}).
     */
    public EventValidator(RunProtocol protocol, boolean sseBody) {
        this.terminalTypes = protocol.terminalTypes();
        this.closingTypes = protocol.closingTypes();
        this.endMarker = sseBody ? protocol.endMarker() : null;
    }

    /** Why the last check failed, for the error reply. */
    public String lastError() {
        return lastError;
    }

    public EventCheck check(ByteBuf json) {
        int length = json.readableBytes();
        byte[] bytes;
        int offset;
        if (json.hasArray()) {
            bytes = json.array();
            offset = json.arrayOffset() + json.readerIndex();
        } else {
            byte[] scratch = scratch(length);
            json.getBytes(json.readerIndex(), scratch, 0, length);
            bytes = scratch;
            offset = 0;
        }
        if (endMarker != null && length == endMarker.length
                && Arrays.equals(bytes, offset, offset + length, endMarker, 0, length)) {
            return EventCheck.END_MARKER;
        }
        int bad = Utf8.firstInvalid(bytes, offset, length);
        if (bad >= 0) {
            lastError = "invalid UTF-8 at byte " + (bad - offset) + " of the event";
            return EventCheck.BAD_UTF8;
        }
        scan.reset(bytes, offset, length);
        try {
            return scanEvent();
        } finally {
            scan.clear();
        }
    }

    /** This thread's scratch array, grown to {@code length} (up to the kept size; past it, a one-off array). */
    private static byte[] scratch(int length) {
        byte[][] holder = SCRATCH.get();
        byte[] kept = holder[0];
        if (kept.length >= length) {
            return kept;
        }
        if (length > KEPT_SCRATCH_BYTES) {
            return new byte[length];
        }
        holder[0] = new byte[Math.min(KEPT_SCRATCH_BYTES, Math.max(length, kept.length * 2))];
        return holder[0];
    }

    /** The event's members in order, with the verdicts Jackson's token walk gives at the same points. */
    private EventCheck scanEvent() {
        JsonScanner s = scan;
        s.skipWhitespace();
        if (s.pos >= s.end || s.bytes[s.pos] != '{') {
            return scanOtherRoot();
        }
        s.openRootObject();
        boolean hasType = false;
        EventCheck verdict = EventCheck.OK;
        s.skipWhitespace();
        if (s.pos < s.end && s.bytes[s.pos] == '}') {
            s.pos++;
        } else {
            while (true) {
                if (!s.scanName()) {
                    return badJson();
                }
                boolean isType = s.stringIs(TYPE);
                if (isType && s.pos < s.end && s.bytes[s.pos] == '"') {
                    if (hasType) {
                        lastError = "duplicate \"type\" key";
                        return EventCheck.DUPLICATE_TYPE;
                    }
                    if (!s.scanString()) {
                        return badJson();
                    }
                    hasType = true;
                    verdict = kindOfType(s);
                } else if (isType) {
                    // Jackson lexes the value's first token before the caller sees it is no string
                    if (!s.scanTokenStart()) {
                        return badJson();
                    }
                    if (hasType) {
                        lastError = "duplicate \"type\" key";
                        return EventCheck.DUPLICATE_TYPE;
                    }
                    lastError = "\"type\" must be a string";
                    return EventCheck.MISSING_TYPE;
                } else if (!s.scanValue()) {
                    return badJson();
                }
                s.skipWhitespace();
                if (s.pos >= s.end) {
                    s.fail("end of input inside the object");
                    return badJson();
                }
                byte c = s.bytes[s.pos];
                if (c == '}') {
                    s.pos++;
                    break;
                }
                if (c != ',') {
                    s.fail("expected ',' or '}'");
                    return badJson();
                }
                s.pos++;
                s.skipWhitespace();
            }
        }
        s.skipWhitespace();
        if (s.pos < s.end) {
            lastError = "unexpected content after the event object";
            return EventCheck.BAD_JSON;
        }
        if (!hasType) {
            lastError = "an event needs a string \"type\"";
            return EventCheck.MISSING_TYPE;
        }
        return verdict;
    }

    /** The verdict a valid event of the type just scanned gets: terminal, closing, or plain. */
    private EventCheck kindOfType(JsonScanner s) {
        for (byte[] t : terminalTypes) {
            if (s.stringIs(t)) {
                return EventCheck.OK_TERMINAL;
            }
        }
        for (byte[] t : closingTypes) {
            if (s.stringIs(t)) {
                return EventCheck.OK_CLOSING;
            }
        }
        return EventCheck.OK;
    }

    /** A root that is not an object: not an object if its first token is well-formed, else malformed. */
    private EventCheck scanOtherRoot() {
        JsonScanner s = scan;
        if (s.pos < s.end) {
            byte c = s.bytes[s.pos];
            boolean wellFormed = c == '"' || c == '[' ? true
                    : c == '-' || c >= '0' && c <= '9' ? s.scanNumber() && s.atRootSpace()
                    : c == 't' || c == 'f' || c == 'n' ? s.scanLiteral()
                    : s.fail("unexpected character");
            if (!wellFormed) {
                return badJson();
            }
        }
        lastError = "an event must be a JSON object";
        return EventCheck.NOT_AN_OBJECT;
    }

    private EventCheck badJson() {
        lastError = scan.error;
        return EventCheck.BAD_JSON;
    }
}
