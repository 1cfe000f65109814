package io.iqstream.server.hostile;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryPlan;
import io.iqstream.server.config.Quantities;
import io.iqstream.server.testing.ServerOutput;
import io.iqstream.server.testing.TestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * The real server, {@code io.iqstream.server.Main serve}, in its own small JVM started with the launcher's flags
 * ({@code iqstream}'s JVM_COMMON: exit on OutOfMemoryError, the pooled allocator, Netty's reflective access) and
 * heap and direct memory sized by {@link MemoryPlan} from the budget, as {@code ./iqstream serve --memory-budget}
 * sizes them. Everything it prints is kept, so a test can say whether it ever ran out of memory
 * ({@code OutOfMemoryError}, Netty's {@code OutOfDirectMemoryError}) and whether it is still alive.
 *
 * <p>Owned by one test class; {@link #close} stops the process (SIGTERM, then kill).
 */
final class HostileServer implements AutoCloseable {
    /** The budget every attack runs against unless it says otherwise (issue 8's {@code --memory-budget 16m}). */
    static final String BUDGET = "16m";

    private static final List<String> JVM_COMMON = List.of("-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError",
            "-Dio.netty.leakDetection.level=disabled", "--enable-native-access=ALL-UNNAMED",
            "-Dio.netty.tryReflectionSetAccessible=true", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED", "-Dio.netty.allocator.type=pooled");

    private static final java.util.regex.Pattern CREDENTIAL = java.util.regex.Pattern.compile(
            "eyJ[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]{4,}|access_token=[^&\\s…]");
    private final Process process;
    private final ConcurrentLinkedQueue<String> output;
    private final int port;
    private final int adminPort;
    private final int workers;

    private HostileServer(Process process, ConcurrentLinkedQueue<String> output, int port, int adminPort,
            int workers) {
        this.process = process;
        this.output = output;
        this.port = port;
        this.workers = workers;
        this.adminPort = adminPort;
    }

    /**
     * Starts {@code serve} on 127.0.0.1, an ephemeral port, 2 workers, the test secret, a 1 s drain and
     * {@code --memory-budget 16m} unless {@code flags} set them, and waits for it to listen. It also gets an
     * {@code --admin-port}, as in production: the health watch probes {@code /healthz} there (docs/SECURITY.md: the
     * admin port keeps answering), and each worker through the main port, which is what the attacks load.
     */
    static HostileServer start(String... flags) throws IOException {
        return start(true, flags);
    }

    /** As {@link #start(String...)}: with {@code --admin-port} on an ephemeral port. */
    static HostileServer startWithAdminPort(String... flags) throws IOException {
        return start(true, flags);
    }

    private static HostileServer start(boolean withAdmin, String... flags) throws IOException {
        List<String> args = new ArrayList<>(Arrays.asList(flags));
        addDefault(args, "--workers", "2");
        addDefault(args, "--jwt-secret", TestServer.SECRET);
        addDefault(args, "--memory-budget", BUDGET);
        addDefault(args, "--drain-timeout", "1s");
        addDefault(args, "--warmup", "0"); // tests of behaviour, not of the start-up's JIT warm-up
        addDefault(args, "--durability", "memory"); // a test of the disk names it, with its own --data-dir
        if (withAdmin) {
            args.add("--admin-port");
            args.add("0"); // ephemeral, read back from the output: a port found free beforehand can be taken
                           // by another process before the server binds it (seen in CI)
        }
        Process p = spawn(args);
        ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
        ServerOutput.Started started = ServerOutput.awaitListening(p, output, "hostile-server-output");
        int admin = -1;
        if (withAdmin) {
            try {
                admin = ServerOutput.awaitAdminPort(output);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
                throw new IOException(e);
            }
        }
        return new HostileServer(p, output, started.port(), admin, Integer.parseInt(valueOf(args, "--workers")));
    }

    /** Runs {@code serve} with {@code flags} (nothing added) and waits up to {@code timeoutMs} for it to exit. */
    static Exit runToExit(long timeoutMs, String... flags) throws IOException, InterruptedException {
        Process p = spawn(List.of(flags));
        byte[] out = p.getInputStream().readAllBytes();
        boolean exited = p.waitFor(timeoutMs, TimeUnit.MILLISECONDS);
        if (!exited) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        return new Exit(exited, exited ? p.exitValue() : -1, new String(out, StandardCharsets.UTF_8));
    }

    /** How a process ended: whether it exited in time, its status and everything it printed. */
    record Exit(boolean exited, int status, String output) {}

    private static Process spawn(List<String> serveArgs) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        String budget = valueOf(serveArgs, "--memory-budget");
        long budgetBytes = budget == null ? Quantities.parseBytes(BUDGET) : Quantities.parseBytes(budget);
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(JVM_COMMON);
        cmd.addAll(Arrays.asList(MemoryPlan.forLimit(0, "test", budgetBytes).jvmFlags().split(" ")));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.iqstream.server.Main", "serve",
                "--host", "127.0.0.1", "--port", "0"));
        cmd.addAll(serveArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        return pb.start();
    }

    private static String valueOf(List<String> args, String flag) {
        int i = args.indexOf(flag);
        return i >= 0 && i + 1 < args.size() ? args.get(i + 1) : null;
    }

    private static void addDefault(List<String> args, String flag, String value) {
        if (!args.contains(flag)) {
            args.add(flag);
            args.add(value);
        }
    }

    int port() {
        return port;
    }

    /** The admin port, or the main port when this server has none. */
    int healthPort() {
        return adminPort > 0 ? adminPort : port;
    }

    /** The server's worker count ({@code --workers}: 2 unless a test set it). */
    int workers() {
        return workers;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String output() {
        return String.join("\n", output);
    }

    /** Lines that say the JVM or Netty ran out of heap or direct memory. */
    List<String> outOfMemoryLines() {
        List<String> hits = new ArrayList<>();
        for (String line : output) {
            if (line.contains("OutOfMemoryError") || line.contains("OutOfDirectMemoryError")) {
                hits.add(line);
            }
        }
        return hits;
    }

    /** The process is alive and never printed an out-of-memory line. */
    void assertSound() {
        assertTrue(outOfMemoryLines().isEmpty(), "out of memory: " + outOfMemoryLines());
        assertTrue(process.isAlive(), "the server process exited (" + exitStatus() + "):\n" + tail());
    }

    /** One line for failure messages: alive or how it exited, and its first out-of-memory line if any. */
    String describe() {
        List<String> oom = outOfMemoryLines();
        return "[server " + exitStatus() + (oom.isEmpty() ? "" : ", " + oom.size() + " out-of-memory lines, first: "
                + oom.get(0)) + "]";
    }

    /** The value of an unlabelled metric line, or -1 when /metrics does not have it. */
    long metric(String name) throws IOException {
        RawHttp.Response r = RawHttp.get(healthPort(), "/metrics");
        for (String line : r.text().split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        return -1;
    }

    /** {@link #metric}, for a condition's lambda: a failed request is an unchecked {@link UncheckedIOException}. */
    long metricNow(String name) {
        try {
            return metric(name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String exitStatus() {
        return process.isAlive() ? "running" : "exit " + process.exitValue();
    }

    private String tail() {
        List<String> lines = new ArrayList<>(output);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    /** Lines of its output that hold a credential: a JWT, or an {@code access_token} with a value. */
    List<String> credentialLines() {
        List<String> hits = new ArrayList<>();
        for (String line : output) {
            if (CREDENTIAL.matcher(line).find()) {
                hits.add(line);
            }
        }
        return hits;
    }

    /**
     * Stops the process; then fails if anything it printed holds a credential (docs/SECURITY.md: no token in any
     * log line), so every attack of the hostile suite is also checked for tokens in the log.
     */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        List<String> leaked = credentialLines();
        if (!leaked.isEmpty()) {
            throw new AssertionError(leaked.size() + " log lines hold a credential, first: " + leaked.get(0));
        }
    }
}
