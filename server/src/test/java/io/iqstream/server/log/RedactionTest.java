package io.iqstream.server.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@link Redaction}: every form a credential takes in a request line, a header or an exception is replaced. */
class RedactionTest {
    private static final String JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";

    @Test
    void queryCredentialsAreReplacedAndTheRestKept() {
        assertEquals("/v1/runs/r/events?access_token=…&live=true",
                Redaction.of("/v1/runs/r/events?access_token=opaque-1&live=true"));
        assertEquals("/x?a=1&TOKEN=…#f", Redaction.of("/x?a=1&TOKEN=s3cr3t#f"));
        assertEquals("/x?authorization=… and iqstream_token=…", Redaction.of("/x?authorization=abc and iqstream_token=def"));
        assertEquals("/x?Access_Token=…", Redaction.of("/x?Access_Token=" + JWT));
        assertEquals("/x?access_token=…", Redaction.of("/x?access_token="));
    }

    @Test
    void bearerValuesAndJwtsAnywhereAreReplaced() {
        assertEquals("Authorization: Bearer …", Redaction.of("Authorization: Bearer opaque.value+/="));
        assertEquals("bearer …", Redaction.of("bearer " + JWT));
        assertEquals("/v1/runs/…/events", Redaction.of("/v1/runs/" + JWT + "/events"));
        // the value runs to the next space (a token never holds one): more may go, never less
        String cookie = Redaction.of("Cookie: iqstream_token=opaque-cookie-value; other=1");
        assertTrue(cookie.startsWith("Cookie: iqstream_token=…") && cookie.endsWith(" other=1"), cookie);
        assertFalse(cookie.contains("opaque-cookie-value"), cookie);
        assertEquals("run id … is bad", Redaction.of("run id " + JWT + " is bad"));
    }

    @Test
    void textWithoutCredentialsIsUnchanged() {
        assertNull(Redaction.of((String) null));
        String plain = "refused GET /v1/runs/run-42/events?live=true from /127.0.0.1:5000: 403 forbidden";
        assertEquals(plain, Redaction.of(plain));
        assertEquals("tokens=3 eyJ only", Redaction.of("tokens=3 eyJ only"));
    }

    @Test
    void anExceptionIsLoggedWithItsTraceAndCausesButNoCredential() {
        IllegalStateException cause = new IllegalStateException("bad header Bearer " + JWT);
        RuntimeException top = new RuntimeException("GET /v1/runs/r?access_token=opaque-9 failed", cause);
        Throwable redacted = Redaction.of(top);
        StringWriter out = new StringWriter();
        redacted.printStackTrace(new PrintWriter(out));
        String printed = out.toString();
        assertFalse(printed.contains(JWT), printed);
        assertFalse(printed.contains("opaque-9"), printed);
        assertTrue(printed.contains("java.lang.RuntimeException: GET /v1/runs/r?access_token=… failed"), printed);
        assertTrue(printed.contains("IllegalStateException: bad header Bearer …"), printed);
        assertArrayEquals(top.getStackTrace(), redacted.getStackTrace());
        assertArrayEquals(cause.getStackTrace(), redacted.getCause().getStackTrace());
    }
}
