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
