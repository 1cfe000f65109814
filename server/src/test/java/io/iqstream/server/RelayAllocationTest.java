package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The relay path's allocation per event (publish decode, validate, append, fan-out to two subscribers, SSE write)
 * at steady state stays within 64 bytes: {@link RelayAllocation} measures it in a JVM started with the launcher's
 * server options ({@code iqstream serve}: Netty's leak detector off, Unsafe allowed on JDK 24+), and this test
 * prints its figure and checks it. Allocation is counted, not timed, so load does not change it. Before the
 * validator's scanner and the chunk framing below the encoder it was about 900 B/event.
 */
class RelayAllocationTest {
    private static final Pattern FIGURE = Pattern.compile("relay allocation: ([0-9.]+) B/event");
    private static final double MAX_BYTES_PER_EVENT = 64;

    @Test
    void relaysAnEventWithin64AllocatedBytes() throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseG1GC",
                "-Dio.netty.leakDetection.level=disabled", "--enable-native-access=ALL-UNNAMED",
                "-Dio.netty.tryReflectionSetAccessible=true", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED", "-Dio.netty.allocator.type=pooled"));
        if (Runtime.version().feature() >= 24) {
            cmd.add("--sun-misc-unsafe-memory-access=allow"); // as the launcher: Netty uses Unsafe only when allowed
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), RelayAllocation.class.getName(),
                "5000", "20000"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the measurement did not end");
        assertEquals(0, p.exitValue(), output);
        Matcher m = FIGURE.matcher(output);
        assertTrue(m.find(), output);
        String line = output.substring(m.start(), output.indexOf('\n', m.start()));
        System.out.println(line);
        double perEvent = Double.parseDouble(m.group(1));
        assertNotNull(line);
        assertTrue(perEvent <= MAX_BYTES_PER_EVENT, line + " > " + MAX_BYTES_PER_EVENT);
    }
}
