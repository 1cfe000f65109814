package io.iqstream.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.run.ThreadRun;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A peer's page of a thread listing, read back: its runs keep their whole start stamps. */
class ThreadListingPeersTest {
    @Test
    void aPeersPageKeepsItsMicrosecondStampsAndAnOlderPeersMillisecondsAreRead() {
        ThreadListingPeers.Part part = ThreadListingPeers.parse("{\"threadId\":\"t\",\"runs\":["
                + "{\"runId\":\"z\",\"running\":false,\"events\":2,\"startedAt\":1700000000123,"
                + "\"startedAtUs\":1700000000123001,\"endedAt\":1700000000124},"
                + "{\"runId\":\"m\",\"running\":true,\"events\":1,\"startedAt\":1700000000123,"
                + "\"startedAtUs\":1700000000123002,\"endedAt\":null},"
                + "{\"runId\":\"old\",\"running\":false,\"events\":2,\"startedAt\":1700000000125,"
                + "\"endedAt\":1700000000126}],\"next\":\"abc\"}");
        List<ThreadRun> runs = part.runs();
        assertEquals(new ThreadRun("z", true, 2, 1_700_000_000_123_001L, 1_700_000_000_124L), runs.get(0));
        assertEquals(new ThreadRun("m", false, 1, 1_700_000_000_123_002L, 0), runs.get(1));
        assertEquals(1_700_000_000_125_000L, runs.get(2).startedAtMicros(), "a peer without startedAtUs");
        assertTrue(part.more());
        assertFalse(ThreadListingPeers.parse("{\"runs\":[],\"next\":null}").more());
    }
}
