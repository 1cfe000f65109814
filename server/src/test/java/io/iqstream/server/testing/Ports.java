package io.iqstream.server.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ports for tests that must name a port before the server binds it (a peer list, a second listener). A port taken
 * from {@code new ServerSocket(0)} and closed is in the kernel's ephemeral range, so any process's next outgoing
 * connection or {@code bind(0)} may take it before the server binds it: a CI run failed so ("the port is already
 * in use"). These come from below that range (Linux's default starts at 32768), where the kernel never hands a
 * port out on its own: only an explicit bind can take one. Each JVM starts at a random offset and walks up, so
 * two test JVMs on one machine rarely meet; each port is checked free before it is given.
 */
public final class Ports {
    private static final int FIRST = 20_000;
    private static final int SPAN = 12_000;
    private static final AtomicInteger NEXT = new AtomicInteger(ThreadLocalRandom.current().nextInt(SPAN));

    private Ports() {}

    /** A loopback port that was free just now and that the kernel does not give out as an ephemeral port. */
    public static int free() throws IOException {
        for (int tries = 0; tries < SPAN; tries++) {
            int port = FIRST + Math.floorMod(NEXT.getAndIncrement(), SPAN);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // in use: the next one
            }
        }
        throw new IOException("no free port in " + FIRST + ".." + (FIRST + SPAN));
    }
}
