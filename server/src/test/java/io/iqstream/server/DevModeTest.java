package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a new user sees: {@code serve} with no key prints a secret, tokens and two curl commands; run as printed,
 * they publish a run and read it back.
 */
class DevModeTest {
    @Test
    void printedCurlCommandsPublishAndReadARun() throws Exception {
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
            // the two commands, as printed: the reader (one line), then the publisher (continued lines)
            int tryAt = indexOf(banner, "Try it");
            String reader = banner.get(tryAt + 1).trim();
            StringBuilder publisher = new StringBuilder();
            for (int i = tryAt + 2; i < banner.size() && !banner.get(i).isBlank(); i++) {
                publisher.append(banner.get(i)).append('\n');
            }
            assertTrue(reader.startsWith("curl -N "), reader);
            Process read = new ProcessBuilder("bash", "-c", reader.replace("curl -N", "curl -sS -N --max-time 20"))
                    .redirectErrorStream(true).start();
            Thread.sleep(300);
            Process publish = new ProcessBuilder("bash", "-c", publisher.toString()).redirectErrorStream(true).start();
            assertTrue(publish.waitFor(20, TimeUnit.SECONDS));
            String reply = new String(publish.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals("{\"runId\":\"hello-1\",\"lastEventId\":5,\"ended\":true}", reply.trim());
            assertTrue(read.waitFor(20, TimeUnit.SECONDS), "the reader's stream ends after RUN_FINISHED");
            String stream = new String(read.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(stream.contains("id: 5\ndata: {\"type\":\"RUN_FINISHED\""), stream);
            assertTrue(stream.contains("\"delta\":\"Hello, world\""), stream);
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static int indexOf(List<String> lines, String marker) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(marker)) {
                return i;
            }
        }
        throw new AssertionError("no '" + marker + "' in the banner: " + lines);
    }
}
