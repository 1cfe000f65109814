package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 8, item 13: a limit the server cannot honour ({@code --max-event-bytes 4g} used to be accepted, then an
 * {@code (int)} cast made every event a 413) stops the real process at start, non-zero, with one line that names
 * the flag — before it listens, so nothing runs half-configured.
 */
class HostileConfigTest {

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"--max-event-bytes, 4g", "--max-event-bytes, 65m", "--max-run-bytes, 2g", "--header-timeout, 0",
        "--body-timeout, 0", "--idle-timeout, 8d", "--max-connections, -1", "--admin-port, 70000"})
    void limitOutOfRangeStopsTheServerAtStartNamingTheFlag(String flag, String value) throws Exception {
        HostileServer.Exit exit = HostileServer.runToExit(20_000, "--jwt-secret", TestServer.SECRET, flag, value);
        assertTrue(exit.exited(), flag + " " + value + ": still running after 20 s:\n" + exit.output());
        assertNotEquals(0, exit.status(), flag + " " + value + ": exit status\n" + exit.output());
        List<String> lines = Arrays.stream(exit.output().split("\n")).filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), flag + " " + value + ": one line, not\n" + exit.output());
        assertTrue(lines.get(0).contains(flag), flag + " " + value + ": the line names the flag: " + lines.get(0));
        assertTrue(!exit.output().contains("listening on"), "it never listened");
    }
}
