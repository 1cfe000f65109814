package io.iqstream.server.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The patterns spawned-server tests fail on match the lines the JVM and Netty really print. */
class OutputChecksTest {
    @Test
    void outOfMemoryMatchesBothKinds() {
        assertTrue(OutputChecks.OUT_OF_MEMORY.matcher(
                "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space").find());
        // Netty's own error does not contain "OutOfMemoryError": a grep for that alone misses it
        assertTrue(OutputChecks.OUT_OF_MEMORY.matcher("io.netty.util.internal.OutOfDirectMemoryError: failed to"
                + " allocate 4194304 byte(s) of direct memory (used: 20971520, max: 25165824)").find());
        assertFalse(OutputChecks.OUT_OF_MEMORY.matcher("iqstream: refused over_budget").find());
    }

    @Test
    void leakMatchesNettysReport() {
        assertTrue(OutputChecks.LEAK.matcher("[nioEventLoopGroup-3-1] ERROR io.netty.util.ResourceLeakDetector -"
                + " LEAK: ByteBuf.release() was not called before it's garbage-collected.").find());
        assertFalse(OutputChecks.LEAK.matcher("iqstream: stopped").find());
    }

    @Test
    void launcherFlagsAreTheLaunchersWithParanoidLeakDetection() {
        var flags = LaunchedServer.launcherJvmFlags();
        assertTrue(flags.contains("-Dio.netty.leakDetection.level=paranoid"), flags.toString());
        assertFalse(flags.contains("-Dio.netty.leakDetection.level=disabled"), flags.toString());
        assertTrue(flags.contains("-Dio.netty.tryReflectionSetAccessible=true"), flags.toString());
        assertTrue(flags.contains("--add-opens=java.base/java.nio=ALL-UNNAMED"), flags.toString());
        assertTrue(flags.contains("-XX:+ExitOnOutOfMemoryError"), flags.toString());
    }
}
