package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The launcher's memory-plan step ({@code MemoryPlan.main}, run by {@code ./iqstream serve} before the JVM starts):
 * a budget the server refuses prints nothing, so the server's own message is the only one; a good one prints the
 * JVM flags and a plan line that does not blame the budget for the machine's limit.
 */
class MemoryPlanMainTest {
    @Test
    void aBudgetTheServerRefusesPrintsNothingAndExitsZero() throws Exception {
        for (String refused : new String[] {"5zz", "1k"}) {
            Result r = run(refused);
            assertEquals(0, r.exit, refused + ": " + r.err);
            assertEquals("", r.out, refused);
            assertEquals("", r.err, refused + " (no stack trace, no plan)");
        }
    }

    @Test
    void aGoodBudgetPrintsFlagsAndAPlanThatNamesTheBudget() throws Exception {
        Result r = run("64m", null);
        assertEquals(0, r.exit, r.err);
        assertTrue(r.out.trim().matches("-XX:\\+UseG1GC " + unsafe() + trim()
                + "-Xmx\\d+m -XX:MaxDirectMemorySize=\\d+m"),
                r.out);
        assertTrue(r.err.contains("event-log budget 64m (--memory-budget)"), r.err);
        assertFalse(r.err.matches("(?s).*limit \\S+ \\(--memory-budget\\).*"),
                "the machine's limit is not the budget's: " + r.err);
    }

    @Test
    void aCollectorChosenInIqstreamJvmOptsIsNotDoubled() throws Exception {
        // the JVM refuses two collectors ("Multiple garbage collectors selected"): the operator's choice wins
        Result r = run("64m", "-Xlog:gc -XX:+UseZGC");
        assertEquals(0, r.exit, r.err);
        assertTrue(r.out.trim().matches(unsafe() + trim() + "-Xmx\\d+m -XX:MaxDirectMemorySize=\\d+m"), r.out);
        assertEquals("-XX:+UseG1GC", MemoryPlan.collectorFlag("-Xms1g -XX:+AlwaysPreTouch"));
        assertEquals("", MemoryPlan.collectorFlag("-XX:+UseShenandoahGC -Xms1g"));
        assertEquals("-XX:+UseG1GC", MemoryPlan.collectorFlag("-XX:+UseGCOverheadLimit"), "not a collector");
    }

    @Test
    void unsafeIsAllowedExactlyWhereTheJdkWouldKeepNettyOffIt() {
        assertEquals("", MemoryPlan.unsafeFlag(21), "JDK 21 has no such option: it would refuse to start");
        assertEquals("", MemoryPlan.unsafeFlag(23));
        assertEquals("--sun-misc-unsafe-memory-access=allow", MemoryPlan.unsafeFlag(24));
        assertEquals("--sun-misc-unsafe-memory-access=allow", MemoryPlan.unsafeFlag(25));
    }

    /** What the plan prints between the collector and the sizing on the JDK running the tests (its own flag + space). */
    @Test
    void freedNativeMemoryIsTrimmedWhereTheJdkHasTheProductOption() {
        assertEquals("", MemoryPlan.trimFlag(21), "JDK 21 has it only as an experimental option: it would refuse it");
        assertEquals("-XX:TrimNativeHeapInterval=2000", MemoryPlan.trimFlag(22));
        assertEquals("-XX:TrimNativeHeapInterval=2000", MemoryPlan.trimFlag(25));
    }

    private static String trim() {
        String f = MemoryPlan.trimFlag(Runtime.version().feature());
        return f.isEmpty() ? "" : f + " ";
    }

    private static String unsafe() {
        String f = MemoryPlan.unsafeFlag(Runtime.version().feature());
        return f.isEmpty() ? "" : f + " ";
    }

    private record Result(int exit, String out, String err) {}

    private static Result run(String budget) throws Exception {
        return run(budget, null);
    }

    /** Runs the plan step with {@code IQSTREAM_JVM_OPTS} set to {@code jvmOptions} (null: unset). */
    private static Result run(String budget, String jvmOptions) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), MemoryPlan.class.getName(), budget);
        pb.environment().remove("IQSTREAM_JVM_OPTS");
        if (jvmOptions != null) {
            pb.environment().put("IQSTREAM_JVM_OPTS", jvmOptions);
        }
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.exitValue(), out, err.lines().filter(l -> !l.startsWith("WARNING:"))
                .reduce("", (a, b) -> a + b + "\n"));
    }
}
