package io.iqstream.server.ingest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.iqstream.server.json.Utf8;
import java.io.IOException;
import java.util.Arrays;

/**
 * The reference for {@link EventValidator}: the validator as it was before its scanner, walking Jackson's streaming
 * parser (default features and constraints) over the event's tokens. Two spaces go before the bytes so that Jackson
 * reads them as UTF-8, as the server does, instead of guessing UTF-16/32 from zero bytes or skipping a byte order
 * mark at the start (the one difference the validator's javadoc states).
 */
final class JacksonEventReference {
    private static final JsonFactory FACTORY = new JsonFactory();

    private JacksonEventReference() {
    }

    static EventCheck check(byte[] json) {
        if (Utf8.firstInvalid(json, 0, json.length) >= 0) {
            return EventCheck.BAD_UTF8;
        }
        byte[] spaced = new byte[json.length + 2];
        spaced[0] = ' ';
        spaced[1] = ' ';
        System.arraycopy(json, 0, spaced, 2, json.length);
        try (JsonParser p = FACTORY.createParser(spaced)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
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
                        return EventCheck.DUPLICATE_TYPE;
                    }
                    if (v != JsonToken.VALUE_STRING) {
                        return EventCheck.MISSING_TYPE;
                    }
                    hasType = true;
                    String type = p.getText();
                    terminal = type.equals("RUN_FINISHED") || type.equals("RUN_ERROR");
                } else {
                    p.skipChildren();
                }
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                return EventCheck.BAD_JSON;
            }
            if (!hasType) {
                return EventCheck.MISSING_TYPE;
            }
            return terminal ? EventCheck.OK_TERMINAL : EventCheck.OK;
        } catch (IOException e) {
            return EventCheck.BAD_JSON;
        }
    }

    /** Describes an input for a failure message: text if printable, else hex. */
    static String show(byte[] json) {
        String hex = java.util.HexFormat.of().formatHex(Arrays.copyOf(json, Math.min(json.length, 300)));
        return new String(json, 0, Math.min(json.length, 300), java.nio.charset.StandardCharsets.UTF_8)
                + " (" + json.length + " bytes; hex " + hex + ")";
    }
}
