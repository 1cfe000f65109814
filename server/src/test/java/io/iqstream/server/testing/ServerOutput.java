package io.iqstream.server.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Queue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The output of a server process started by a test: read on a daemon thread into a queue (for out-of-memory and
 * leak checks), until the "listening on" line gives the bound port. Shared by every fixture that spawns
 * {@code Main serve}.
 */
public final class ServerOutput {
    /** The line {@code Main} prints once bound; group 1 is the port. */
    public static final Pattern LISTENING = Pattern.compile("listening on http://[^:]+:(\\d+)");

    /** The line {@code Main} prints once the admin port is bound ({@code --admin-port}); group 1 is the port. */
    public static final Pattern ADMIN = Pattern.compile("admin port \\(/healthz, /readyz, /metrics\\) on http://[^:]+:(\\d+)");

    /** The bound port and the thread that keeps reading the output. */
    public record Started(int port, Thread reader) {}

    private ServerOutput() {}

    /**
     * Reads {@code p}'s output into {@code output} on a daemon thread named {@code threadName} and waits up to
     * 30 s for its port; the process is killed and an AssertionError thrown when it does not start.
     */
    public static Started awaitListening(Process p, Queue<String> output, String threadName) throws IOException {
        CountDownLatch listening = new CountDownLatch(1);
        int[] port = {-1};
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    output.add(line);
                    Matcher m = LISTENING.matcher(line);
                    if (port[0] < 0 && m.find()) {
                        port[0] = Integer.parseInt(m.group(1));
                        listening.countDown();
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
            listening.countDown();
        }, threadName);
        reader.setDaemon(true);
        reader.start();
        try {
            if (!listening.await(30, TimeUnit.SECONDS) || port[0] < 0) {
                p.destroyForcibly();
                throw new AssertionError("server did not start: " + String.join("\n", output));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException(e);
        }
        return new Started(port[0], reader);
    }

    /**
     * The admin port a server started with {@code --admin-port 0} bound, read from its output: {@code Main} prints
     * it just after the "listening on" line. Waits up to 10 s; an AssertionError when it never comes.
     */
    public static int awaitAdminPort(Queue<String> output) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            for (String line : output) {
                Matcher m = ADMIN.matcher(line);
                if (m.find()) {
                    return Integer.parseInt(m.group(1));
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the server never said its admin port: " + String.join("\n", output));
    }
}
