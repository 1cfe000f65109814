package io.iqstream.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.iqstream.server.run.RunIds;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Percent-decoding of request targets and run ids: properties a fuzzer tries to break, and known cases. */
class RequestTargetFuzzTest {
    private static final String ID_CHARS = "abcXYZ019._~:-";

    /** No target makes the parser throw; a target it accepts never makes Netty's decoder throw either. */
    @FuzzTest
    void anyTargetParsesOrIsRefusedWithoutThrowing(FuzzedDataProvider data) {
        String uri = data.consumeRemainingAsString();
        checkTarget(uri);
    }

    private static void checkTarget(String uri) {
        RequestTarget target = RequestTarget.parse(uri);
        if (target == null) {
            return;
        }
        new QueryStringDecoder(uri).parameters(); // the router relies on this not throwing for accepted targets
        assertEquals(target.path(), PercentDecoder.decode(target.rawPath(), false));
        RunRoute route = RunRoute.parse(target.rawPath());
        if (route != null) {
            assertTrue(target.rawPath().startsWith("/v1/runs/"));
        }
    }

    /** A valid run id, with any of its characters percent-encoded (either hex case), routes back to itself. */
    @FuzzTest
    void encodedRunIdRoundTrips(FuzzedDataProvider data) {
        int n = data.consumeInt(1, RunIds.MAX_LENGTH);
        StringBuilder id = new StringBuilder(n);
        StringBuilder encoded = new StringBuilder(n * 3);
        for (int i = 0; i < n && data.remainingBytes() > 0; i++) {
            char c = ID_CHARS.charAt(data.consumeInt(0, ID_CHARS.length() - 1));
            id.append(c);
            if (data.consumeBoolean()) {
                String hex = String.format("%02X", (int) c);
                encoded.append('%').append(data.consumeBoolean() ? hex : hex.toLowerCase());
            } else {
                encoded.append(c);
            }
        }
        if (id.isEmpty()) {
            return;
        }
        boolean events = data.consumeBoolean();
        String uri = "/v1/runs/" + encoded + (events ? "/events" : "") + "?lastEventId=1";
        RequestTarget target = RequestTarget.parse(uri);
        assertNotNull(target, uri);
        RunRoute route = RunRoute.parse(target.rawPath());
        assertNotNull(route, uri);
        assertEquals(id.toString(), route.runId());
        assertEquals(events, route.events());
        assertTrue(RunIds.isValid(route.runId()));
    }

    /** Any text, its UTF-8 bytes all percent-encoded, decodes back to itself (path and query rules alike). */
    @FuzzTest
    void percentEncodedTextDecodesBack(String text) {
        if (text == null || !StandardCharsets.UTF_8.newEncoder().canEncode(text)) {
            return;
        }
        StringBuilder encoded = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            encoded.append('%').append(String.format("%02x", b & 0xff));
        }
        assertEquals(text, PercentDecoder.decode(encoded.toString(), false));
        assertEquals(text, PercentDecoder.decode(encoded.toString(), true));
    }

    @Test
    void knownMalformedTargetsAreRefused() {
        for (String uri : new String[] {"/healthz%ZZ", "/v1/runs/r%/events", "/v1/runs/r%4", "/x?access_token=%ZZ",
                "/x?lastEventId=%ZZ", "/x?a=%", "/%C0%8A", "/%ED%A0%80", "/a b", "/\u00e9"}) {
            assertNull(RequestTarget.parse(uri), uri);
            checkTarget(uri);
        }
    }

    @Test
    void knownTargetsParse() {
        RequestTarget t = RequestTarget.parse("/v1/runs/a%2Fb/events?access_token=x%2By+z&lastEventId=3&flag");
        assertNotNull(t);
        assertEquals("/v1/runs/a/b/events", t.path());
        assertEquals("x+y z", t.parameter("access_token"));
        assertEquals("3", t.parameter("lastEventId"));
        assertEquals("", t.parameter("flag"));
        assertEquals("a/b", RunRoute.parse(t.rawPath()).runId());
        assertEquals("caf\u00e9", PercentDecoder.decode("caf%C3%A9", false));
        percentEncodedTextDecodesBack("r\u00e9sum\u00e9 \ud83d\ude00 / ? & = +");
    }
}
