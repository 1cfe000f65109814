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
        return offer(ledger, id, epoch, seq, 0);
    }

    private static ProducerLedger.Verdict offer(ProducerLedger ledger, String id, long epoch, long seq, long nowMs) {
        ProducerLedger.Verdict v = ledger.check(id, epoch, seq, nowMs);
        if (v == APPEND) {
            ledger.accept(id, epoch, seq, nowMs);
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
        assertEquals(DUPLICATE, ledger.check("a", 0, 2, 0), "the last one again");
        assertEquals(DUPLICATE, ledger.check("a", 0, 0, 0), "an earlier one again");
        assertEquals(2, ledger.lastSeq("a"), "a duplicate is answered with the last seq accepted");
        assertEquals(APPEND, ledger.check("a", 0, 3, 0));
    }

    @Test
    void aSkippedSeqIsAGapWithTheSeqDue() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(SEQUENCE_GAP, ledger.check("a", 0, 5, 0), "a new producer starts at 0");
        assertEquals(0, ledger.expectedSeq("a"));
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(SEQUENCE_GAP, ledger.check("a", 0, 3, 0));
        assertEquals(2, ledger.expectedSeq("a"));
        assertEquals(SEQUENCE_GAP, offer(ledger, "a", 0, 3), "a gap is not accepted");
        assertEquals(APPEND, ledger.check("a", 0, 2, 0), "the seq due is still 2");
    }

    @Test
    void aLowerEpochIsStaleAndANewEpochStartsAtZero() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(NEW_EPOCH_NOT_AT_ZERO, ledger.check("a", 1, 2, 0), "a new epoch does not carry the seq on");
        assertEquals(APPEND, offer(ledger, "a", 1, 0), "a new epoch at 0 fences the old one off");
        assertEquals(1, ledger.epoch("a"));
        assertEquals(0, ledger.lastSeq("a"), "its seqs count anew");
        assertEquals(STALE_EPOCH, ledger.check("a", 0, 2, 0), "the old epoch's next seq");
        assertEquals(STALE_EPOCH, ledger.check("a", 0, 0, 0), "even a seq the new epoch has");
        assertEquals(1, ledger.epoch("a"), "answered with the current epoch");
        assertEquals(APPEND, offer(ledger, "a", 7, 0), "epochs may jump");
        assertEquals(STALE_EPOCH, ledger.check("a", 6, 0, 0));
    }

    @Test
    void aCheckChangesNothingUntilTheAppendIsAccepted() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(APPEND, ledger.check("a", 0, 0, 0));
        assertEquals(0, ledger.size(), "a checked append refused later (over budget, too large) leaves no trace");
        assertEquals(APPEND, ledger.check("a", 0, 0, 0), "so its retry is appended, not taken for a duplicate");
        ledger.accept("a", 0, 0, 0);
        assertEquals(APPEND, ledger.check("a", 3, 0, 0));
        assertEquals(0, ledger.epoch("a"), "checking a new epoch does not fence the old one");
        assertEquals(APPEND, ledger.check("a", 0, 1, 0));
    }

    @Test
    void producersAreIndependent() {
        ProducerLedger ledger = new ProducerLedger();
        assertEquals(APPEND, offer(ledger, "a", 0, 0));
        assertEquals(APPEND, offer(ledger, "a", 0, 1));
        assertEquals(APPEND, offer(ledger, "b", 4, 0), "another producer's seq and epoch are its own");
        assertEquals(SEQUENCE_GAP, ledger.check("b", 4, 2, 0));
        assertEquals(APPEND, ledger.check("a", 0, 2, 0));
        assertEquals(STALE_EPOCH, ledger.check("b", 0, 1, 0));
        assertEquals(APPEND, ledger.check("a", 0, 2, 0), "b's epoch fences only b");
        assertEquals(2, ledger.size());
    }

    @Test
    void pastTheBoundANewProducerIsRefusedWhileEveryOtherMayStillRetry() {
        ProducerLedger ledger = new ProducerLedger();
        int max = ProducerLedger.MAX_PRODUCERS;
        long t = 1_000_000;
        assertEquals(APPEND, offer(ledger, "victim", 3, 0, t));
        assertEquals(APPEND, offer(ledger, "victim", 3, 1, t));
        for (int i = 1; i < max; i++) {
            assertEquals(APPEND, offer(ledger, "p" + i, 0, 0, t + i));
        }
        assertEquals(max, ledger.size());
        // a thousand and twenty-fourth other producer does not push out the victim's fence
        assertEquals(ProducerLedger.Verdict.TOO_MANY_PRODUCERS, offer(ledger, "new", 0, 0, t + max));
        assertEquals(max, ledger.size(), "bounded");
        assertEquals(STALE_EPOCH, ledger.check("victim", 2, 0, t + max), "the zombie is still fenced off");
        assertEquals(DUPLICATE, ledger.check("victim", 3, 1, t + max), "a retry is still a duplicate");
        assertEquals(DUPLICATE, ledger.check("victim", 3, 0, t + max), "seq 0 retried is never stored twice");
        assertEquals(APPEND, offer(ledger, "p1", 0, 1, t + max), "a remembered producer goes on");
        // once the least recent has been silent long enough, a new producer takes its place
        long later = t + ProducerLedger.FORGET_AFTER_MS;
        assertEquals(APPEND, offer(ledger, "new", 0, 0, later));
        assertEquals(-1, ledger.lastSeq("victim"), "the least recently accepted, silent for a week, is forgotten");
        assertEquals(SEQUENCE_GAP, ledger.check("victim", 3, 2, later), "its next seq is a gap, never a duplicate");
        assertEquals(0, ledger.expectedSeq("victim"));
        assertEquals(ProducerLedger.Verdict.TOO_MANY_PRODUCERS, offer(ledger, "newer", 0, 0, later),
                "p2 was accepted less than a week before: it stays");
        assertEquals(0, ledger.lastSeq("p2"));
    }

    @Test
    void theClosingAppendIsRememberedExactly() {
        ProducerLedger ledger = new ProducerLedger();
        assertFalse(ledger.isClosingAppend("a", 0, 0), "nothing closed yet");
        ledger.accept("a", 0, 0, 0);
        ledger.accept("a", 0, 1, 0);
        ledger.recordClosingAppend("a", 0, 1);
        assertTrue(ledger.isClosingAppend("a", 0, 1), "its retry");
        assertFalse(ledger.isClosingAppend("a", 0, 0), "another seq");
        assertFalse(ledger.isClosingAppend("a", 1, 1), "another epoch");
        assertFalse(ledger.isClosingAppend("b", 0, 1), "another producer");
    }
}
