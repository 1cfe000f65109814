package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A listed run's order and the cursor of its page. */
class ThreadRunTest {
    private static String b64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void runsAreOrderedByTheirWholeStampThenById() {
        ThreadRun z = new ThreadRun("z", true, 2, 1_700_000_000_123_001L, 1);
        ThreadRun m = new ThreadRun("m", true, 2, 1_700_000_000_123_002L, 1);
        ThreadRun a = new ThreadRun("a", true, 2, 1_700_000_000_123_002L, 1);
        List<ThreadRun> runs = new ArrayList<>(List.of(m, a, z));
        runs.sort(ThreadRun.ORDER);
        assertEquals(List.of(z, a, m), runs, "z started first within the millisecond; a and m tie: by id");
        assertEquals(1_700_000_000_123L, z.startedAtMs());
    }

    @Test
    void aCursorComesBackAsItWentAndPlacesTheNextRunsAfterIt() {
        ThreadRun.Cursor c = new ThreadRun("run-7", false, 3, 1_700_000_000_123_456L, 0).cursor();
        assertEquals(c, ThreadRun.Cursor.decode(c.encode()));
        assertTrue(c.isBefore(1_700_000_000_123_457L, "a"), "a later stamp, whatever its id");
        assertTrue(c.isBefore(1_700_000_000_123_456L, "run-8"));
        assertFalse(c.isBefore(1_700_000_000_123_456L, "run-7"), "itself");
        assertFalse(c.isBefore(1_700_000_000_123_455L, "zzz"), "an earlier stamp, whatever its id");
    }

    @Test
    void aCursorOfTheMillisecondBuildLosesNoRunOfItsMillisecond() {
        ThreadRun.Cursor old = ThreadRun.Cursor.decode(b64("1700000000123.run-7"));
        assertEquals(new ThreadRun.Cursor(1_700_000_000_123_000L, "run-7"), old);
        assertTrue(old.isBefore(1_700_000_000_123_000L, "run-8"), "the same millisecond, a later id");
        assertTrue(old.isBefore(1_700_000_000_123_999L, "a"), "later in the millisecond: listed (maybe again)");
        assertFalse(old.isBefore(1_700_000_000_122_999L, "zzz"), "an earlier millisecond");
    }

    @Test
    void whatIsNotACursorIsNull() {
        for (String s : new String[] {"", "u", "u.x", ".x", "ux.y", "u12", "12", "99999999999999999999.x",
                "10000000000000000.x"}) {
            assertNull(ThreadRun.Cursor.decode(b64(s)), s);
        }
        assertNull(ThreadRun.Cursor.decode("!!"));
        assertNull(ThreadRun.Cursor.decode(null));
        assertNull(ThreadRun.Cursor.decode("A".repeat(2049)));
    }
}
