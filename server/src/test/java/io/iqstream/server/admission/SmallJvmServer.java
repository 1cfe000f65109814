package io.iqstream.server.admission;

import io.iqstream.server.testing.OutputChecks;
import io.iqstream.server.testing.TestServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real server in its own JVM with a small heap and small direct memory (as the launcher would size them for a
 * small budget), for tests that attack its memory: an OutOfMemoryError there shows in its output, not in the test.
 * Netty's leak detector runs at {@code simple} there (one buffer in 128 sampled, no access records), not paranoid:
 * these tests push a million events through a 48 MiB heap, where paranoid's per-access records would be the
 * memory under test and slow each test to minutes; {@link #close} fails if the process printed a {@code LEAK:}
 * report.
 */
final class SmallJvmServer implements AutoCloseable {
    private final Process process;
    private final ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
    private final int port;
    private Thread drain;

    private SmallJvmServer(List<String> jvmFlags, List<String> serverFlags) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-XX:+ExitOnOutOfMemoryError", "-Dio.netty.leakDetection.level=simple", "-cp",
                System.getProperty("java.class.path"), "io.iqstream.server.Main", "serve", "--host", "127.0.0.1",
                "--port", "0", "--workers", "2", "--jwt-secret", TestServer.SECRET));
        cmd.addAll(serverFlags);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        process = pb.start();
        port = awaitPort();
    }

    /** Starts a server; {@code jvmFlags} such as -Xmx48m, then its own flags. */
    static SmallJvmServer start(List<String> jvmFlags, String... serverFlags) throws Exception {
        return new SmallJvmServer(jvmFlags, List.of(serverFlags));
    }

    int port() {
        return port;
    }

    /** The server JVM's process id (to attach to it: {@link ChildHeap}). */
    long pid() {
        return process.pid();
    }

    String base() {
        return "http://127.0.0.1:" + port;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Everything the server printed so far. */
    String output() {
        return String.join("\n", output);
    }

    /** True when the server printed an OutOfMemoryError of any kind (heap, direct, Netty's direct). */
    boolean ranOutOfMemory() {
        String all = output();
        return OutputChecks.OUT_OF_MEMORY.matcher(all).find();
    }

    /** Stops the process (SIGTERM through its handle, which keeps the pipe open, then kill) and fails on a leak. */
    @Override
    public void close() throws Exception {
        process.toHandle().destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        if (drain != null) {
            drain.join(10_000);
        }
        if (OutputChecks.LEAK.matcher(output()).find()) {
            throw new AssertionError("Netty reported leaked buffers in the spawned server:\n" + output());
        }
    }

    /** A gauge or counter from the /metrics text; -1 when absent. */
    static long metric(String metricsText, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\d+)").matcher(metricsText);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private int awaitPort() throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Pattern listening = Pattern.compile("listening on http://[^:]+:(\\d+)");
        long deadline = System.nanoTime() + 30_000_000_000L;
        String line;
        while (System.nanoTime() < deadline && (line = r.readLine()) != null) {
            output.add(line);
            Matcher m = listening.matcher(line);
            if (m.find()) {
                drain = new Thread(() -> {
                    try {
                        String l;
                        while ((l = r.readLine()) != null) {
                            output.add(l);
                        }
                    } catch (Exception ignored) {
                        // process ended
                    }
                });
                drain.setDaemon(true);
                drain.start();
                return Integer.parseInt(m.group(1));
            }
        }
        throw new AssertionError("server did not start: " + output());
    }
}
