package io.iqstream.server.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;

/** Last-Event-ID parsing: a value iff the text is a decimal id in range, never an overflow or an exception. */
class LastEventIdFuzzTest {
    /** Any text: the parser agrees with an arbitrary-precision reference. */
    @FuzzTest
    void parseAgreesWithTheReference(String text) {
        assertEquals(reference(text), LastEventId.parse(text), () -> "text: " + text);
    }

    /** Any number written in decimal: itself when 0..MAX, else malformed (no wrap-around). */
    @FuzzTest
    void numbersParseToThemselvesOnlyInRange(long n) {
        long expected = n >= 0 && n <= LastEventId.MAX ? n : LastEventId.MALFORMED;
        assertEquals(expected, LastEventId.parse(Long.toString(n)));
        assertEquals(LastEventId.MALFORMED, LastEventId.parse(Long.toUnsignedString(n) + "9999999999"),
                "always above MAX");
    }

    private static long reference(String text) {
        if (text == null || text.isBlank()) {
            return 0;
        }
        String t = text.trim();
        if (!t.matches("[0-9]+")) {
            return LastEventId.MALFORMED;
        }
        BigInteger v = new BigInteger(t);
        return v.compareTo(BigInteger.valueOf(LastEventId.MAX)) > 0 ? LastEventId.MALFORMED : v.longValue();
    }

    @Test
    void knownIds() {
        for (String text : new String[] {"0", "7", " 42 ", "2147483647", "2147483648", "4294967297",
                "99999999999999999999", "-1", "+1", "1e3", "0x10", "", " ", "007", "\u0661"}) {
            parseAgreesWithTheReference(text);
        }
        assertEquals(2147483647L, LastEventId.parse("2147483647"));
        assertEquals(LastEventId.MALFORMED, LastEventId.parse("2147483648"));
        assertEquals(LastEventId.MALFORMED, LastEventId.parse("4294967297"), "no int wrap-around to 1");
        numbersParseToThemselvesOnlyInRange(Long.MAX_VALUE);
        numbersParseToThemselvesOnlyInRange(Long.MIN_VALUE);
        numbersParseToThemselvesOnlyInRange(Integer.MAX_VALUE);
    }
}
