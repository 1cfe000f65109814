package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.config.Flag;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way {@code iqstream serve} can fail at start ends the same way: one line on stderr that names the value and
 * the flag with its environment twin, no stack trace, a non-zero exit. Each test starts the real entry point.
 */
class StartupFailureTest {
    @TempDir
    Path dir;

    @Test
    void portInUseNamesTheAddressAndThePortFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            String line = failedStart("--host", "127.0.0.1", "--port", String.valueOf(port));
            assertNames(line, "127.0.0.1:" + port, "in use", "--port", "IQSTREAM_PORT");
        }
    }

    @Test
    void adminPortInUseNamesTheAdminPortFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            String line = failedStart("--host", "127.0.0.1", "--port", "0", "--admin-port", String.valueOf(port));
            assertNames(line, "127.0.0.1:" + port, "in use", "--admin-port", "IQSTREAM_ADMIN_PORT");
        }
    }

    @Test
    void anAddressThisMachineDoesNotHaveNamesTheHostFlag() throws Exception {
        // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a real interface
        String line = failedStart("--host", "192.0.2.1", "--port", "0");
        assertNames(line, "192.0.2.1", "not an address of this machine", "--host", "IQSTREAM_HOST");
    }

    @Test
    void aHostNameThatDoesNotResolveNamesTheHostFlag() throws Exception {
        String line = failedStart("--host", "no-such-host.invalid", "--port", "0");
        assertNames(line, "no-such-host.invalid", "does not resolve", "--host", "IQSTREAM_HOST");
    }

    @Test
    void aPortBelow1024WithoutPermissionNamesThePortFlag() throws Exception {
        List<String> withoutPermission = List.of();
        try (ServerSocket privileged = new ServerSocket(1, 1, InetAddress.getLoopbackAddress())) {
            // root (or CAP_NET_BIND_SERVICE): the server is started without that capability (util-linux's setpriv
            // drops it from the bounding set, so the exec'd JVM has it in no set), not skipped
            withoutPermission = List.of("setpriv", "--bounding-set=-net_bind_service", "--inh-caps=-net_bind_service",
                    "--");
            assertTrue(new ProcessBuilder("setpriv", "--version").start().waitFor() == 0, "this user may bind port 1"
                    + " and setpriv (util-linux) is missing to start the server without that capability");
        } catch (IOException expected) {
            // no permission: the case under test as it stands
        }
        String line = failedStart(withoutPermission, "--host", "127.0.0.1", "--port", "1");
        assertNames(line, "127.0.0.1:1", "below 1024", "--port", "IQSTREAM_PORT");
    }

    @Test
    void permissionDeniedIsWordedForPortsBelow1024() {
        // the words Netty's native transport and the JDK's NIO transport use for EACCES
        for (Exception cause : List.of(new SocketException("bind(..) failed with error(-13): Permission denied"),
                new java.net.BindException("Permission denied"))) {
            String line = StartupFailure.listen(cause, "0.0.0.0", 80, Flag.PORT).getMessage();
            assertNames(line, "0.0.0.0:80", "below 1024", "--port", "IQSTREAM_PORT");
        }
    }

    @Test
    void aMissingKeyFileNamesTheKeyFlag() throws Exception {
        String line = failedStart("--port", "0", "--jwt-public-key", dir.resolve("missing.pem").toString());
        assertNames(line, "missing.pem", "--jwt-public-key", "IQSTREAM_JWT_PUBLIC_KEY");
    }

    @Test
    void aKeyFileWithoutAKeyNamesTheKeyFlag() throws Exception {
        Path notAKey = Files.writeString(dir.resolve("not-a-key.pem"), "hello\n");
        String line = failedStart("--port", "0", "--jwt-public-key", notAKey.toString());
        assertNames(line, "not-a-key.pem", "--jwt-public-key", "IQSTREAM_JWT_PUBLIC_KEY");
    }

    @Test
    void aBrokenJwksFileNamesTheJwksFlag() throws Exception {
        Path broken = Files.writeString(dir.resolve("broken-jwks.json"), "{\"keys\":[\n");
        String line = failedStart("--port", "0", "--jwks", broken.toString());
        assertNames(line, "broken-jwks.json", "--jwks", "IQSTREAM_JWKS");
    }

    @Test
    void aJwksUrlWithNoAnswerStopsTheStartBeforeTheWarmUp() throws Exception {
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        String url = "http://127.0.0.1:" + closedPort + "/keys.json";
        // failedStart checks that nothing of the warm-up (on by default here) ran before the failure
        String line = failedStart("--port", "0", "--jwks", url, "--jwks-timeout", "1s");
        assertNames(line, url, "--jwks-timeout");
    }

    private static void assertNames(String line, String... parts) {
        for (String part : parts) {
            assertTrue(line.contains(part), "'" + part + "' missing from: " + line);
        }
    }

    /** Starts {@code serve} with {@code flags}, expects it to exit non-zero, and returns its one iqstream: line. */
    private static String failedStart(String... flags) throws Exception {
        return failedStart(List.of(), flags);
    }

    /** {@link #failedStart(String...)} with the JVM started under {@code wrapper} (a command and its options). */
    private static String failedStart(List<String> wrapper, String... flags) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new java.util.ArrayList<>(wrapper);
        command.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), "io.iqstream.server.Main", "serve"));
        command.addAll(List.of(flags));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("IQSTREAM_"));
        Process p = pb.start();
        boolean exited = p.waitFor(60, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(exited, "the server started instead of failing:\n" + out);
        assertNotEquals(0, p.exitValue(), out);
        assertFalse(out.contains("\tat ") || out.contains("Exception in thread"), "a stack trace:\n" + out);
        // the ports are bound before the JIT warm-up (default on here): a start that cannot work fails before it
        assertFalse(out.contains("warming up") || out.contains("warmed up"), "failed only after the warm-up:\n" + out);
        List<String> lines = out.lines().filter(l -> l.startsWith("iqstream:")).toList();
        assertEquals(1, lines.size(), "one iqstream: line expected:\n" + out);
        return lines.get(0);
    }
}
