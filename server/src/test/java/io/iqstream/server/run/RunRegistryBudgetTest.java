package io.iqstream.server.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryBudget;
import io.iqstream.server.config.ConfigParser;
import io.iqstream.server.config.ServerConfig;
import io.iqstream.server.metrics.Metrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The registry charges the budget for everything a run holds (segments, index, overheads): a run of a million
 * tiny events is refused by the budget with its accounted size equal to what it holds, and every byte comes back.
 */
class RunRegistryBudgetTest {
    /** Not leak-tracked: PARANOID tracking of millions of appends would take minutes. */
    private static final ByteBufAllocator UNTRACKED = new UnpooledByteBufAllocator(true, true);
    private static final ByteBuf TINY = Unpooled.unreleasableBuffer(
            Unpooled.copiedBuffer("{\"type\":\"X\"}", StandardCharsets.UTF_8));

    @Test
    void noRunIsCreatedAfterDropAllSoNothingOutlivesTheShutdown() {
        ServerConfig config = ConfigParser.parse(new String[] {"--memory-budget", "16m"}, Map.of());
        MemoryBudget budget = new MemoryBudget(16L << 20);
        RunRegistry registry = new RunRegistry(new EmbeddedChannel().eventLoop(), config, budget, new Metrics(),
                UNTRACKED);
        Run before = registry.create("before");
        assertEquals(AppendOutcome.APPENDED, registry.append(before, TINY.duplicate(), false));
        registry.dropAll();
        assertTrue(before.log().isReleased(), "a run of before the shutdown is freed");
        assertEquals(0, budget.committedBytes());
        // a publish still arriving on a kept-alive connection while the loop shuts down
        assertNull(registry.create("late"));
        assertNull(registry.get("late"));
        assertEquals(0, budget.committedBytes(), "nothing was reserved for it");
    }

    @Test
    void millionTinyEventsAreRefusedByTheBudgetWithTheirIndexCounted() {
        ServerConfig config = ConfigParser.parse(new String[] {"--memory-budget", "16m", "--tombstone", "1m"},
                Map.of());
        EventLoop loop = new EmbeddedChannel().eventLoop();
        MemoryBudget budget = new MemoryBudget(16L << 20);
        RunRegistry registry = new RunRegistry(loop, config, budget, new Metrics(), UNTRACKED);
        long[] chargedAtEnd = new long[4];
        int[] eventsTaken = new int[4];
        AppendOutcome last = null;
        for (int r = 0; r < 4; r++) {
            Run run = registry.create("tiny-" + r);
            if (run == null) {
                break;
            }
            int i = 0;
            for (; i < 1_000_000; i++) {
                last = registry.append(run, TINY.duplicate(), false);
                if (last != AppendOutcome.APPENDED) {
                    break;
                }
                assertTrue(run.chargedBytes() >= run.log().heldBytes());
            }
            eventsTaken[r] = i;
            chargedAtEnd[r] = run.chargedBytes();
            System.out.printf("run %d: %d events, charged %d B (segments %d B, index %d B), budget used %d B%n",
                    r, i, run.chargedBytes(), run.log().capacityBytes(), run.log().indexBytes(),
                    budget.committedBytes());
        }
        assertEquals(AppendOutcome.OVER_BUDGET, last, "the budget refused an append");
        assertTrue(eventsTaken[0] == 1_000_000, "one run of a million fits 16 MiB: " + eventsTaken[0]);
        assertTrue(chargedAtEnd[0] >= 4_000_000, "its index (4 B per event) is charged: " + chargedAtEnd[0]);
        assertTrue(budget.committedBytes() <= (16L << 20) + (4L << 20), "within budget + headroom");
        registry.dropAll();
        assertEquals(0, budget.committedBytes(), "every byte given back");
    }

    @Test
    void anEndedRunIsChargedExactlyWhatItsSealedLogHolds() {
        ServerConfig config = ConfigParser.parse(new String[] {"--tombstone", "1m"}, Map.of());
        EventLoop loop = new EmbeddedChannel().eventLoop();
        MemoryBudget budget = new MemoryBudget(64L << 20);
        RunRegistry registry = new RunRegistry(loop, config, budget, new Metrics(), UNTRACKED);
        Run run = registry.create("exact");
        for (int i = 0; i < 5000; i++) {
            assertEquals(AppendOutcome.APPENDED, registry.append(run, TINY.duplicate(), false));
        }
        assertEquals(AppendOutcome.APPENDED_TERMINAL, registry.append(run,
                Unpooled.copiedBuffer("{\"type\":\"RUN_FINISHED\"}", StandardCharsets.UTF_8), true));
        assertEquals(run.log().heldBytes(), run.chargedBytes());
        assertEquals(run.chargedBytes(), budget.committedBytes());
        registry.drop(run);
        assertEquals(budget.tombstoneBytes(), budget.committedBytes(), "only its tombstone is left charged");
        registry.dropAll();
        assertEquals(0, budget.committedBytes());
    }

    @Test
    void lingeringCopiesGiveWayToANewRun() {
        ServerConfig config = ConfigParser.parse(new String[] {"--tombstone", "1m"}, Map.of());
        EventLoop loop = new EmbeddedChannel().eventLoop();
        MemoryBudget budget = new MemoryBudget(4L << 20);
        RunRegistry registry = new RunRegistry(loop, config, budget, new Metrics(), UNTRACKED);
        ByteBuf token = Unpooled.unreleasableBuffer(Unpooled.copiedBuffer(
                "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m\",\"delta\":\"some words\"}",
                StandardCharsets.UTF_8));
        for (int r = 0; r < 4; r++) {
            Run run = registry.create("live-" + r);
            for (int i = 0; i < 400; i++) { // a few segments: the newest packed one lingers
                assertEquals(AppendOutcome.APPENDED, registry.append(run, token.duplicate(), false));
            }
        }
        assertEquals(4, registry.copies().size(), "one lingering copy per live run");
        long lingering = registry.copies().heldBytes();
        assertTrue(lingering >= 4 * RunLog.SEGMENT_BYTES, "charged: " + lingering);
        // fill the budget so that a new run fits only once the lingering copies are gone
        long room = budget.budgetBytes() - budget.committedBytes() - budget.expectedRunBytes();
        assertTrue(budget.tryChargeWithinBudget(room + lingering / 2));
        assertTrue(registry.create("new") != null, "the lingering copies were freed for the new run");
        assertEquals(0, registry.copies().size());
        budget.release(room + lingering / 2);
        registry.dropAll();
        assertEquals(0, budget.committedBytes(), "every byte given back");
    }
}
