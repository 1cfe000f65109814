package io.iqstream.server.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * Two real nodes in this JVM, each with the other in {@code --peers} (loopback, free ports, one cluster secret),
 * started and returned once each sees both members ready. Closed, it stops both.
 */
public final class TwoNodes implements AutoCloseable {
    /** The nodes' {@code --cluster-secret}. */
    public static final String SECRET = "cluster-test-secret-0123456789abcdef0123";

    private final TestServer a;
    private final TestServer b;

    private TwoNodes(TestServer a, TestServer b) {
        this.a = a;
        this.b = b;
    }

    /** Starts both nodes with {@code flags} added to their cluster flags; returns when each sees two members ready. */
    public static TwoNodes start(String... flags) throws Exception {
        int pa = Ports.free();
        int pb = Ports.free();
        String peers = "127.0.0.1:" + pa + ",127.0.0.1:" + pb;
        TestServer a = TestServer.start(flagsOf(pa, peers, flags));
        TestServer b;
        try {
            b = TestServer.start(flagsOf(pb, peers, flags));
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
        TwoNodes nodes = new TwoNodes(a, b);
        try {
            for (TestServer s : List.of(a, b)) {
                Conditions.await("the nodes see each other", 30_000,
                        () -> s.server().context().cluster().membership().view().ready().size() >= 2);
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            nodes.close();
            throw e;
        }
        return nodes;
    }

    private static String[] flagsOf(int port, String peers, String... flags) {
        List<String> all = new ArrayList<>(List.of("--port", String.valueOf(port), "--peers", peers, "--advertise",
                "127.0.0.1:" + port, "--cluster-secret", SECRET));
        all.addAll(List.of(flags));
        return all.toArray(String[]::new);
    }

    public TestServer a() {
        return a;
    }

    public TestServer b() {
        return b;
    }

    @Override
    public void close() {
        a.close();
        b.close();
    }
}
