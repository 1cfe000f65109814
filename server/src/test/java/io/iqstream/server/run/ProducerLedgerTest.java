package io.iqstream.server.run;

import static io.iqstream.server.run.ProducerLedger.Verdict.APPEND;
import static io.iqstream.server.run.ProducerLedger.Verdict.DUPLICATE;
import static io.iqstream.server.run.ProducerLedger.Verdict.NEW_EPOCH_NOT_AT_ZERO;
import static io.iqstream.server.run.ProducerLedger.Verdict.SEQUENCE_GAP;
import static io.iqstream.server.run.ProducerLedger.Verdict.STALE_EPOCH;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The idempotent producers' rules as data: each (id, epoch, seq) gets its verdict — the next append, a duplicate, a
 * gap, a stale epoch, a new epoch not at 0 — a check changes nothing until the append is accepted, producers are
 * independent, and past {@link ProducerLedger#MAX_PRODUCERS} the least recently accepted one is forgotten.
 */
class ProducerLedgerTest {
    /** Checks and, when the verdict is APPEND, accepts: what a stored append does. */
    private static ProducerLedger.Verdict offer(ProducerLedger ledger, String id, long epoch, long seq) {
        ProducerLedger.Verdict v = ledger.check(id, epoch, seq);
        if (v == APPEND) {
            ledger.accept(id, epoch, seq);
        }
        return v;
    }

    @Test
    void theNextSeqIsAppendedAndARepeatIsADuplicate() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(-1, ledger.lastSeq("a"), "unknown");
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(APPEND, offer(ledger, "a", 0, 2));
        assertEquals(2, ledger.lastSeq("a"));
        assertEquals(DUPLICATE, ledger.check("a", 0, 2), "the last one again");
        assertEquals(DUPLICATE, ledger.check("a", 0, 0), "an earlier one again");
        assertEquals(2, ledger.lastSeq("a"), "a duplicate is answered with the last seq accepted");
        assertEquals(APPEND, ledger.check("a", 0, 3));
    }

    @Test
    void aSkippedSeqIsAGapWithTheSeqDue() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(SEQUENCE_GAP, ledger.check("a", 0, 5), "a new producer starts at 0");
        assertEquals(0, ledger.expectedSeq("a"));
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(SEQUENCE_GAP, ledger.check("a", 0, 3));
        assertEquals(2, ledger.expectedSeq("a"));
        assertEquals(SEQUENCE_GAP, offer(ledger, "a", 0, 3), "a gap is not accepted");
        assertEquals(APPEND, ledger.check("a", 0, 2), "the seq due is still 2");
    }

    @Test
    void aLowerEpochIsStaleAndANewEpochStartsAtZero() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(NEW_EPOCH_NOT_AT_ZERO, ledger.check("a", 1, 2), "a new epoch does not carry the seq on");
        assertEquals(APPEND, offer(ledger, "a", 1, 0), "a new epoch at 0 fences the old one off");
        assertEquals(1, ledger.epoch("a"));
        assertEquals(0, ledger.lastSeq("a"), "its seqs count anew");
        assertEquals(STALE_EPOCH, ledger.check("a", 0, 2), "the old epoch's next seq");
        assertEquals(STALE_EPOCH, ledger.check("a", 0, 0), "even a seq the new epoch has");
        assertEquals(1, ledger.epoch("a"), "answered with the current epoch");
        assertEquals(APPEND, offer(ledger, "a", 7, 0), "epochs may jump");
        assertEquals(STALE_EPOCH, ledger.check("a", 6, 0));
    }

    @Test
    void aCheckChangesNothingUntilTheAppendIsAccepted() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(APPEND, ledger.check("a", 0, 0));
        assertEquals(0, ledger.size(), "a checked append refused later (over budget, too large) leaves no trace");
        assertEquals(APPEND, ledger.check("a", 0, 0), "so its retry is appended, not taken for a duplicate");
        ledger.accept("a", 0, 0);
        assertEquals(APPEND, ledger.check("a", 3, 0));
        assertEquals(0, ledger.epoch("a"), "checking a new epoch does not fence the old one");
        assertEquals(APPEND, ledger.check("a", 0, 1));
    }

    @Test
    void producersAreIndependent() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(APPEND, offer(ledger, "b", 4, 0), "another producer's seq and epoch are its own");
        assertEquals(SEQUENCE_GAP, ledger.check("b", 4, 2));
        assertEquals(APPEND, ledger.check("a", 0, 2));
        assertEquals(STALE_EPOCH, ledger.check("b", 0, 1));
        assertEquals(APPEND, ledger.check("a", 0, 2), "b's epoch fences only b");
        assertEquals(2, ledger.size());
    }

    @Test
    void pastTheBoundTheLeastRecentlyAcceptedIsForgotten() {
        ProducerLedger ledger = new ProducerLedger();
        int max = ProducerLedger.MAX_PRODUCERS;
        for (int i = 0; i < max; i++) {
            assertEquals(APPEND, offer(ledger, "p" + i, 0, 0));
        }
        assertEquals(max, ledger.size());
        assertEquals(APPEND, offer(ledger, "p0", 0, 1), "p0 is active again: p1 is now the least recent");
        assertEquals(APPEND, offer(ledger, "p2", 0, 1), "an append of a remembered producer evicts nobody");
        assertEquals(max, ledger.size());
        assertEquals(0, ledger.lastSeq("p1"), "all remembered still");
        assertEquals(APPEND, offer(ledger, "new", 0, 0));
        assertEquals(max, ledger.size(), "bounded");
        assertEquals(-1, ledger.lastSeq("p1"), "the least recently accepted is forgotten");
        assertEquals(SEQUENCE_GAP, ledger.check("p1", 0, 1), "its next seq is a gap, never a silent duplicate");
        assertEquals(0, ledger.expectedSeq("p1"));
        assertEquals(APPEND, ledger.check("p0", 0, 2), "the recently active are kept");
        assertEquals(DUPLICATE, ledger.check("p3", 0, 0));
        assertEquals(APPEND, offer(ledger, "newer", 0, 0));
        assertEquals(-1, ledger.lastSeq("p3"), "then the next least recent (p2 and p0 were active since)");
        assertEquals(1, ledger.lastSeq("p2"));
    }

    @Test
    void theClosingAppendIsRememberedExactly() {
        ProducerLedger ledger = new ProducerLedger();
        assertFalse(ledger.isClosingAppend("a", 0, 0), "nothing closed yet");
        ledger.accept("a", 0, 0);
        ledger.accept("a", 0, 1);
        ledger.recordClosingAppend("a", 0, 1);
        assertTrue(ledger.isClosingAppend("a", 0, 1), "its retry");
        assertFalse(ledger.isClosingAppend("a", 0, 0), "another seq");
        assertFalse(ledger.isClosingAppend("a", 1, 1), "another epoch");
        assertFalse(ledger.isClosingAppend("b", 0, 1), "another producer");
    }
}
