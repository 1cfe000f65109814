package io.iqstream.server.hostile;

/**
 * The span of one attack: {@link HealthWatch} probing throughout (/healthz and each worker) and, where asked, an
 * {@link HonestRun} streaming beside it. {@link #assertSurvived} checks what every hostile test must end with: the
 * honest run delivered whole, every /healthz and worker probe answered with its status all along (and a whole round
 * of them after the attack), no out-of-memory line, the process alive.
 * Confined to the test's thread.
 */
final class AttackWindow implements AutoCloseable {
    private static int runs;

    private final HostileServer server;
    private final HealthWatch watch;
    private final HonestRun honest;

    private AttackWindow(HostileServer server, HealthWatch watch, HonestRun honest) {
        this.server = server;
        this.watch = watch;
        this.honest = honest;
    }

    /** Starts the health watch and an honest run, and returns once the run is under way. */
    static AttackWindow open(HostileServer server) throws Exception {
        warmUp(server);
        HealthWatch watch = HealthWatch.start(server);
        try {
            return new AttackWindow(server, watch, HonestRun.start(server, "honest-" + (++runs) + "-"
                    + Long.toHexString(System.nanoTime())));
        } catch (Exception | AssertionError e) {
            watch.stop();
            throw e;
        }
    }

    /**
     * For an attack on the main port's connection slots (--max-connections), where a refused main-port connection
     * is the expected answer: the honest run, and the watch on /healthz of the admin port only.
     */
    static AttackWindow openWatchingAdminOnly(HostileServer server) throws Exception {
        warmUp(server);
        HealthWatch watch = HealthWatch.start(server, false);
        try {
            return new AttackWindow(server, watch, HonestRun.start(server, "honest-" + (++runs) + "-"
                    + Long.toHexString(System.nanoTime())));
        } catch (Exception | AssertionError e) {
            watch.stop();
            throw e;
        }
    }

    /** Starts the health watch only (for attacks that leave no room for a run, such as a refused start). */
    static AttackWindow openWithoutRun(HostileServer server) {
        warmUp(server);
        return new AttackWindow(server, HealthWatch.start(server), null);
    }

    /** One probe before the watch starts, so the first timed one does not pay for class loading. */
    private static void warmUp(HostileServer server) {
        try {
            RawHttp.get(server.healthPort(), "/healthz");
        } catch (Exception | AssertionError e) {
            // the watch will record it
        }
    }

    void assertSurvived() throws InterruptedException {
        server.assertSound();
        if (honest != null) {
            honest.assertWhole();
        }
        watch.assertHealthy();
        server.assertSound();
    }

    @Override
    public void close() throws InterruptedException {
        watch.stop();
    }
}
