package io.iqstream.server.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real server in its own JVM, started by bash under a file limit ({@code ulimit -n}), for tests of what the
 * process does at its limits. Loopback, port 0, the test secret; its output is kept for failure messages. Netty's
 * leak detector runs at paranoid there, and {@link #close} fails if the process printed a {@code LEAK:} report.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening on http://[^:]+:(\\d+)");
    private static final Pattern ADMIN = Pattern.compile("admin port .* on http://[^:]+:(\\d+)");

    private final Process process;
    private final ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
    private Thread reader;
    private int port;
    private int adminPort = -1;

    private ServerProcess(Process process) {
        this.process = process;
    }

    /** Starts the server with {@code ulimit -n fileLimit} (soft and hard) and the given extra flags. */
    public static ServerProcess start(int fileLimit, String... flags) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx128m", "-Dio.netty.leakDetection.level=paranoid",
                "-cp", System.getProperty("java.class.path"), "io.iqstream.server.Main", "serve",
                "--host", "127.0.0.1", "--port", "0", "--workers", "2", "--jwt-secret", TestServer.SECRET,
                "--durability", "memory"));
        cmd.addAll(List.of(flags));
        StringBuilder line = new StringBuilder("ulimit -n " + fileLimit + " && exec");
        for (String c : cmd) {
            line.append(" '").append(c.replace("'", "'\\''")).append('\'');
        }
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", line.toString());
        pb.redirectErrorStream(true);
        ServerProcess s = new ServerProcess(pb.start());
        s.awaitStart();
        return s;
    }

    private void awaitStart() {
        BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        reader = new Thread(() -> {
            try {
                String l;
                while ((l = r.readLine()) != null) {
                    output.add(l);
                    Matcher m = LISTENING.matcher(l);
                    if (m.find()) {
                        synchronized (this) {
                            port = Integer.parseInt(m.group(1));
                        }
                    }
                    Matcher a = ADMIN.matcher(l);
                    if (a.find()) {
                        synchronized (this) {
                            adminPort = Integer.parseInt(a.group(1));
                            notifyAll();
                        }
                    }
                }
            } catch (IOException e) {
                // process ended
            }
            synchronized (this) {
                notifyAll();
            }
        }, "server-process-output");
        reader.setDaemon(true);
        reader.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        synchronized (this) {
            while (port == 0 && process.isAlive() && System.nanoTime() < deadline) {
                try {
                    wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (port == 0) {
            process.destroyForcibly();
            throw new AssertionError("server did not start: " + output());
        }
    }

    public synchronized int port() {
        return port;
    }

    /** The admin port, waiting briefly for its line (printed right after the main one); -1 when off. */
    public synchronized int adminPort() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (adminPort < 0 && process.isAlive() && System.nanoTime() < deadline) {
            wait(50);
        }
        return adminPort;
    }

    /** The server's process id (the shell execs the JVM: its id is the JVM's). */
    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Everything the server printed so far. */
    public String output() {
        return String.join("\n", output);
    }

    /** Stops the process (SIGTERM through its handle, which keeps the pipe open, then kill) and fails on a leak. */
    @Override
    public void close() throws InterruptedException {
        process.toHandle().destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(10_000);
        if (OutputChecks.LEAK.matcher(output()).find()) {
            throw new AssertionError("Netty reported leaked buffers in the spawned server:\n" + output());
        }
    }
}
