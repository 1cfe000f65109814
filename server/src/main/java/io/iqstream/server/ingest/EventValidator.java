package io.iqstream.server.ingest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import java.io.IOException;

/**
 * Checks that an event is well-formed UTF-8 and one well-formed JSON object with exactly one string {@code type}
 * (a duplicate is refused: parsers disagree on which one wins), and tells terminal events apart. Uses Jackson's
 * streaming parser (no tree is built); nested values are skipped. One instance per publishing connection (it keeps
 * a scratch array); not thread-safe.
 */
public final class EventValidator {
    private static final JsonFactory FACTORY = new JsonFactory();

    private byte[] scratch = new byte[1024];
    private String lastError = "";

    /** Why the last check failed, for the error reply. */
    public String lastError() {
        return lastError;
    }

    private static final char[] RUN_FINISHED = "RUN_FINISHED".toCharArray();
    private static final char[] RUN_ERROR = "RUN_ERROR".toCharArray();

    /** Whether the type text is RUN_FINISHED or RUN_ERROR, compared in place (no String per event). */
    private static boolean isTerminal(char[] text, int offset, int length) {
        return java.util.Arrays.equals(text, offset, offset + length, RUN_FINISHED, 0, RUN_FINISHED.length)
                || java.util.Arrays.equals(text, offset, offset + length, RUN_ERROR, 0, RUN_ERROR.length);
    }

    public EventCheck check(ByteBuf json) {
        int length = json.readableBytes();
        byte[] bytes;
        int offset;
        if (json.hasArray()) {
            bytes = json.array();
            offset = json.arrayOffset() + json.readerIndex();
        } else {
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, scratch.length * 2)];
            }
            json.getBytes(json.readerIndex(), scratch, 0, length);
            bytes = scratch;
            offset = 0;
        }
        int bad = Utf8.firstInvalid(bytes, offset, length);
        if (bad >= 0) {
            lastError = "invalid UTF-8 at byte " + (bad - offset) + " of the event";
            return EventCheck.BAD_UTF8;
        }
        try (JsonParser p = FACTORY.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                lastError = "an event must be a JSON object";
                return EventCheck.NOT_AN_OBJECT;
            }
            boolean hasType = false;
            boolean terminal = false;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if ("type".equals(name)) {
                    if (hasType) {
                        lastError = "duplicate \"type\" key";
                        return EventCheck.DUPLICATE_TYPE;
                    }
                    if (v != JsonToken.VALUE_STRING) {
                        lastError = "\"type\" must be a string";
                        return EventCheck.MISSING_TYPE;
                    }
                    hasType = true;
                    terminal = isTerminal(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
                } else {
                    p.skipChildren();
                }
            }
            if (t != JsonToken.END_OBJECT) {
                lastError = "malformed JSON object";
                return EventCheck.BAD_JSON;
            }
            if (p.nextToken() != null) {
                lastError = "unexpected content after the event object";
                return EventCheck.BAD_JSON;
            }
            if (!hasType) {
                lastError = "an event needs a string \"type\"";
                return EventCheck.MISSING_TYPE;
            }
            return terminal ? EventCheck.OK_TERMINAL : EventCheck.OK;
        } catch (JsonProcessingException e) {
            lastError = "malformed JSON: " + e.getOriginalMessage();
            return EventCheck.BAD_JSON;
        } catch (IOException e) {
            lastError = "malformed JSON: " + e.getMessage();
            return EventCheck.BAD_JSON;
        }
    }
}
