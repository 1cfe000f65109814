package io.iqstream.server.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.TestServer;
import io.iqstream.server.testing.Tokens;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs every {@code ```bash example} block of docs/API.md, in order, with curl against a live server; and README.md's
 * with the variables dev mode exports, twice.
 */
class DocsExamplesTest {
    @Test
    void everyApiExampleRunsAndChecksItsOutput() throws Exception {
        Path doc = Path.of("..", "docs", "API.md");
        List<String> blocks = examples(Files.readString(doc));
        assertTrue(blocks.size() >= 9, "examples found: " + blocks.size());
        // the streaming example must stream: it waits, inside its own open body, for a reader to have event 1,
        // which only happens when curl sends stdin as it comes (-T -), not all at once (--data-binary @-)
        String streaming = blocks.stream().filter(b -> b.contains("stream an open run")).findFirst().orElseThrow();
        assertTrue(streaming.contains("-T -") && streaming.contains("until grep -qx \"id: 1\""), streaming);
        try (TestServer server = TestServer.start("--await-run", "1s")) {
            for (String block : blocks) {
                ProcessBuilder pb = new ProcessBuilder("bash", "-c", "set -euo pipefail\n" + block);
                pb.environment().put("IQ", server.base());
                pb.environment().put("PUB", Tokens.admin());
                pb.environment().put("SUB", Tokens.subscriber("demo-*"));
                pb.environment().put("SECRET", TestServer.SECRET);
                pb.redirectErrorStream(true);
                Process p = pb.start();
                assertTrue(p.waitFor(30, TimeUnit.SECONDS), "example timed out:\n" + block);
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, p.exitValue(), "example failed:\n" + block + "\noutput:\n" + out);
            }
        }
    }

    @Test
    void everyReadmeExampleRunsWithDevModesVariables() throws Exception {
        Path readme = Path.of("..", "README.md");
        List<String> blocks = examples(Files.readString(readme));
        assertTrue(!blocks.isEmpty(), "README has a bash example");
        try (TestServer server = TestServer.start()) {
            for (String block : blocks) {
                for (int paste = 1; paste <= 2; paste++) { // pasted twice, as a newcomer will
                    ProcessBuilder pb = new ProcessBuilder("bash", "-c", "set -euo pipefail\n" + block)
                            .directory(Path.of("..").toFile());
                    // dev mode's tokens: PUB publishes and reads every run, SUB reads every run
                    pb.environment().put("IQ", server.base());
                    pb.environment().put("PUB", Tokens.admin());
                    pb.environment().put("SUB", Tokens.subscriber("*"));
                    pb.environment().put("SECRET", TestServer.SECRET);
                    pb.redirectErrorStream(true);
                    Process p = pb.start();
                    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "example timed out:\n" + block);
                    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    assertEquals(0, p.exitValue(), "README example failed (paste " + paste + "):\n" + block
                            + "\noutput:\n" + out);
                }
            }
        }
    }

    static List<String> examples(String markdown) {
        List<String> blocks = new ArrayList<>();
        StringBuilder current = null;
        for (String line : markdown.split("\n", -1)) {
            if (current == null && line.trim().equals("```bash example")) {
                current = new StringBuilder();
            } else if (current != null && line.trim().equals("```")) {
                blocks.add(current.toString());
                current = null;
            } else if (current != null) {
                current.append(line).append('\n');
            }
        }
        return blocks;
    }
}
