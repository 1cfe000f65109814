package io.iqstream.server.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.admission.MemoryPlan;
import io.iqstream.server.config.Quantities;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real server, {@code io.iqstream.server.Main serve}, in its own JVM started the way the launcher starts it:
 * the JVM flags are read from the {@code JVM_COMMON=(...)} array of the repository's {@code iqstream} script (exit
 * on OutOfMemoryError, G1, the pooled allocator, Netty's reflective direct-memory access), heap and direct memory
 * sized by {@link MemoryPlan} from the budget as {@code ./iqstream serve --memory-budget} sizes them — with one
 * change: Netty's leak detector at {@code paranoid} instead of {@code disabled}, so a test can fail on a
 * {@code LEAK:} line. Everything the process prints is kept.
 *
 * <p>Owned by one test; {@link #close} stops the process (SIGTERM, then kill) and reads its output to the end, and
 * {@link #assertNoLeaks} is meant to be called after it.
 */
public final class LaunchedServer implements AutoCloseable {
    private static final Pattern JVM_COMMON = Pattern.compile("(?s)\\nJVM_COMMON=\\((.*?)\\)");

    private final Process process;
    private final ConcurrentLinkedQueue<String> output;
    private final Thread reader;
    private final int port;

    private LaunchedServer(Process process, ConcurrentLinkedQueue<String> output, Thread reader, int port) {
        this.process = process;
        this.output = output;
        this.reader = reader;
        this.port = port;
    }

    /**
     * The launcher's JVM flags ({@code JVM_COMMON} in {@code iqstream}) with the leak detector at paranoid.
     * Fails if the launcher no longer has the array or no longer disables the detector (then this needs a look).
     */
    public static List<String> launcherJvmFlags() {
        Path script = repositoryRoot().resolve("iqstream");
        String text;
        try {
            text = Files.readString(script);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Matcher m = JVM_COMMON.matcher(text);
        if (!m.find()) {
            throw new AssertionError("no JVM_COMMON=(...) in " + script);
        }
        List<String> flags = new ArrayList<>(Arrays.asList(m.group(1).trim().split("\\s+")));
        int off = flags.indexOf("-Dio.netty.leakDetection.level=disabled");
        if (off < 0) {
            throw new AssertionError("the launcher's JVM_COMMON no longer disables leak detection: " + flags);
        }
        flags.set(off, "-Dio.netty.leakDetection.level=paranoid");
        return flags;
    }

    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("iqstream"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new AssertionError("the iqstream launcher is not in any folder above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /**
     * Starts {@code serve --host 127.0.0.1 --port 0} with {@code flags}, adding {@code --workers 2} and the test
     * secret unless given, heap and direct memory from {@link MemoryPlan} for the flags' {@code --memory-budget}
     * (16m when absent), and waits up to 30 s for the listening line.
     */
    public static LaunchedServer start(String... flags) throws IOException {
        List<String> args = new ArrayList<>(Arrays.asList(flags));
        addDefault(args, "--workers", "2");
        addDefault(args, "--jwt-secret", TestServer.SECRET);
        addDefault(args, "--memory-budget", "16m");
        addDefault(args, "--warmup", "0"); // tests of behaviour, not of the start-up's JIT warm-up
        addDefault(args, "--durability", "memory"); // a test of the disk names it, with its own --data-dir
        long budgetBytes = Quantities.parseBytes(args.get(args.indexOf("--memory-budget") + 1));
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(launcherJvmFlags());
        cmd.addAll(Arrays.asList(MemoryPlan.forLimit(0, "test", budgetBytes).jvmFlags().split(" ")));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.iqstream.server.Main", "serve",
                "--host", "127.0.0.1", "--port", "0"));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
        // (the command line itself is not kept: its -XX:+ExitOnOutOfMemoryError would match the out-of-memory check)
        ServerOutput.Started started = ServerOutput.awaitListening(p, output, "launched-server-output");
        return new LaunchedServer(p, output, started.reader(), started.port());
    }

    private static void addDefault(List<String> args, String flag, String value) {
        if (!args.contains(flag)) {
            args.add(flag);
            args.add(value);
        }
    }

    public int port() {
        return port;
    }

    public String base() {
        return "http://127.0.0.1:" + port;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Sends SIGTERM through the process handle. Not {@link Process#destroy()}: it sends the same signal but also
     * closes the pipe this class reads, so nothing printed during the drain (or a leak report) would be seen.
     */
    public void sigterm() {
        process.toHandle().destroy();
    }

    /** Everything printed so far, one line each. */
    public String output() {
        return String.join("\n", output);
    }

    /** True once a printed line contains {@code text}. */
    public boolean printed(String text) {
        return output.stream().anyMatch(l -> l.contains(text));
    }

    /** Lines that say the JVM or Netty ran out of heap or direct memory. */
    public List<String> outOfMemoryLines() {
        return matching(OutputChecks.OUT_OF_MEMORY);
    }

    /** Lines in which Netty's leak detector reported a buffer never released. */
    public List<String> leakLines() {
        return matching(OutputChecks.LEAK);
    }

    private List<String> matching(Pattern p) {
        List<String> hits = new ArrayList<>();
        for (String line : output) {
            if (p.matcher(line).find()) {
                hits.add(line);
            }
        }
        return hits;
    }

    /** Fails when the server printed a {@code LEAK:} line; call after {@link #close} to see the whole run. */
    public void assertNoLeaks() {
        assertTrue(leakLines().isEmpty(), "Netty reported leaked buffers in the spawned server:\n" + output());
    }

    /** Sends SIGKILL (a crash: no drain, nothing flushed) and waits for the process to be gone. */
    public void sigkill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        reader.join(10_000);
    }

    /** Waits up to {@code timeoutMs} for the process to exit and returns its status, or -1 while it runs. */
    public int awaitExit(long timeoutMs) throws InterruptedException {
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            return -1;
        }
        reader.join(10_000); // the last lines are still in the pipe when the process is gone
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        sigterm();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(10_000);
    }
}
