package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.iqstream.server.http.RequestTarget;
import java.net.URI;
import org.junit.jupiter.api.Test;

/**
 * Every request target the server's parser accepts can be sent to a peer through the JDK's HTTP client
 * ({@link java.net.URI}, the model) after {@link PeerTarget#encode}, and means the same there: the same path and
 * the same parameters once parsed again. A target that broke this was a 500 with its token in the log (issue 23).
 */
class PeerTargetFuzzTest {
    @FuzzTest
    void anyAcceptedTargetIsRelayableAndMeansTheSame(FuzzedDataProvider data) {
        check("/v1/runs/" + data.consumeRemainingAsString());
    }

    @Test
    void theCharactersAStrangerSentAreRelayed() {
        for (String c : new String[] {"|", "{", "}", "\"", "<", ">", "\\", "^", "`", "[", "]", " ", "#frag"}) {
            check("/v1/runs/r1/events?access_token=eyJx.eyJy.z&x=a" + c + "b&y=%7C");
        }
        assertEquals("/v1/runs/r?x=a%7Cb", PeerTarget.encode("/v1/runs/r?x=a|b#c"));
    }

    /**
     * A fork's source, named decoded in its header, is looked up at the peers by a target that decodes to it: any
     * path a stream can have (one the parser decoded from an accepted target) makes the round trip.
     */
    @FuzzTest
    void anyStreamPathIsLookedUpAsItself(FuzzedDataProvider data) {
        RequestTarget sent = RequestTarget.parse("/v1/stream/" + data.consumeRemainingAsString());
        if (sent != null) {
            checkPath(sent.path());
        }
    }

    @Test
    void aForkSourceWithEscapesAndQueryCharactersIsLookedUpAsItself() {
        for (String p : new String[] {"a%2Fb", "a?b=c", "a#b", "chat room|1", "caf\u00e9/x", "%", "a+b"}) {
            checkPath("/v1/stream/" + p);
        }
    }

    private static void checkPath(String decoded) {
        String target = PeerTarget.pathOf(decoded);
        URI u = URI.create("http://127.0.0.1:1" + target);
        assertEquals(target, u.getRawPath(), "the JDK client sends it as one path");
        RequestTarget there = RequestTarget.parse(target);
        assertNotNull(there, target);
        assertEquals(decoded, there.path(), target);
    }

    private static void check(String uri) {
        RequestTarget parsed = RequestTarget.parse(uri);
        if (parsed == null) {
            return;
        }
        String encoded = PeerTarget.encode(uri);
        URI u = URI.create("http://127.0.0.1:1" + encoded);
        String sent = u.getRawPath() + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
        assertEquals(encoded, sent, "the JDK client sends the encoded target unchanged");
        RequestTarget there = RequestTarget.parse(sent);
        assertNotNull(there, sent);
        assertEquals(parsed.path(), there.path(), uri);
        assertEquals(parsed.parameters(), there.parameters(), uri);
    }
}
