package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a new user sees: {@code serve} with no key prints a secret and tokens as {@code export} lines and a short
 * example that uses them; pasted as printed into a shell, the example publishes a run and reads it back, and pasted
 * a second time it does so again (a fresh run id each time, no 409 {@code run_ended}).
 */
class DevModeTest {
    private static final Pattern PUBLISH_REPLY =
            Pattern.compile("\\{\"runId\":\"(hello-[^\"]+)\",\"lastEventId\":5,\"ended\":true}");

    @Test
    void printedExportsAndExampleWorkAsPastedTwice() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process server = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                "io.iqstream.server.Main", "serve", "--host", "127.0.0.1", "--port", "0")
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
                    StandardCharsets.UTF_8));
            List<String> banner = new ArrayList<>();
            String line;
            while ((line = out.readLine()) != null && !line.contains("listening on http://")) {
                banner.add(line);
            }
            String text = String.join("\n", banner);
            assertTrue(text.contains("DEVELOPMENT MODE"), text);
            List<String> exports = block(banner, "Paste once");
            assertEquals(4, exports.size(), "export IQ, SECRET, PUB, SUB: " + exports);
            for (String name : List.of("IQ", "SECRET", "PUB", "SUB")) {
                assertTrue(exports.stream().anyMatch(e -> e.startsWith("export " + name + "='")),
                        name + ": " + exports);
            }
            List<String> example = block(banner, "Try it");
            // the example is the lines up to the parenthesised note
            List<String> commands = example.stream().takeWhile(l -> !l.startsWith("(")).toList();
            assertTrue(commands.size() <= 12, "short: " + commands);
            // printed as it is to be pasted: continued lines end with a backslash, none runs off the screen
            assertTrue(commands.stream().allMatch(l -> l.length() <= 110), "lines as printed: " + commands);
            assertTrue(commands.stream().filter(l -> l.endsWith(" \\")).count() >= 3, "continued lines: " + commands);
            // one terminal: the exports once, then the example pasted twice
            String script = String.join("\n", exports) + "\n" + String.join("\n", commands) + "\n"
                    + String.join("\n", commands) + "\n";
            Process shell = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
            assertTrue(shell.waitFor(40, TimeUnit.SECONDS), "the pasted example did not finish");
            String result = new String(shell.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, shell.exitValue(), result);
            Matcher replies = PUBLISH_REPLY.matcher(result);
            List<String> runs = new ArrayList<>();
            while (replies.find()) {
                runs.add(replies.group(1));
            }
            assertEquals(2, runs.size(), "two published runs:\n" + result);
            assertTrue(!runs.get(0).equals(runs.get(1)), "a fresh run id each paste: " + runs);
            for (String run : runs) {
                assertTrue(result.contains("id: 5\ndata: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\""
                        + run + "\"}"), "the reader read " + run + " to its end:\n" + result);
            }
            assertTrue(result.contains("\"delta\":\"Hello, world\""), result);
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The indented lines after the line containing {@code marker}, up to the next blank line, trimmed. */
    private static List<String> block(List<String> lines, String marker) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(marker)) {
                List<String> block = new ArrayList<>();
                int j = i + 1;
                while (j < lines.size() && !lines.get(j).startsWith("  ") && !lines.get(j).isBlank()) {
                    j++; // the rest of the heading
                }
                for (; j < lines.size() && !lines.get(j).isBlank(); j++) {
                    block.add(lines.get(j).strip());
                }
                return block;
            }
        }
        throw new AssertionError("no '" + marker + "' in the banner: " + lines);
    }
}
