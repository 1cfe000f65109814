package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RendezvousTest {
    private static final Member A = new Member("10.0.0.1", 8080);
    private static final Member B = new Member("10.0.0.2", 8080);
    private static final Member C = new Member("10.0.0.3", 8080);
    private static final Member D = new Member("10.0.0.4", 8080);

    @Test
    void everyOrderOfTheSameMembersPicksTheSameOwner() {
        for (int i = 0; i < 1000; i++) {
            String run = "run-" + i;
            assertEquals(Rendezvous.owner(run, List.of(A, B, C)), Rendezvous.owner(run, List.of(C, A, B)));
        }
    }

    @Test
    void spreadsRunsOverMembers() {
        Map<Member, Integer> counts = new HashMap<>();
        for (int i = 0; i < 3000; i++) {
            counts.merge(Rendezvous.owner("run-" + i, List.of(A, B, C)), 1, Integer::sum);
        }
        for (Member m : List.of(A, B, C)) {
            assertTrue(counts.getOrDefault(m, 0) > 800, "share of " + m + ": " + counts);
        }
    }

    @Test
    void aJoiningMemberTakesAboutAQuarterAndNothingElseMoves() {
        int moved = 0;
        for (int i = 0; i < 4000; i++) {
            String run = "run-" + i;
            Member before = Rendezvous.owner(run, List.of(A, B, C));
            Member after = Rendezvous.owner(run, List.of(A, B, C, D));
            if (!before.equals(after)) {
                assertEquals(D, after, run + " moved between old members");
                moved++;
            }
        }
        assertTrue(moved > 700 && moved < 1300, "moved " + moved + " of 4000");
    }

    @Test
    void aLeavingMemberOnlyMovesItsOwnRuns() {
        for (int i = 0; i < 2000; i++) {
            String run = "run-" + i;
            Member before = Rendezvous.owner(run, List.of(A, B, C));
            if (!before.equals(B)) {
                assertEquals(before, Rendezvous.owner(run, List.of(A, C)), run);
            }
        }
    }
}
