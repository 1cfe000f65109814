package io.iqstream.server.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ContainerMemoryTest {
    private static Path fixture(String name) throws URISyntaxException {
        return Path.of(ContainerMemoryTest.class.getResource("/cgroup/" + name).toURI());
    }

    private static ContainerMemory read(String name) throws URISyntaxException {
        Path root = fixture(name);
        return ContainerMemory.detect(root.resolve("sys/fs/cgroup"), root.resolve("self-cgroup"),
                fixture("meminfo"));
    }

    @Test
    void readsCgroupV2LimitOfTheProcessOwnGroup() throws Exception {
        ContainerMemory m = read("v2");
        assertEquals(536_870_912L, m.limitBytes());
        assertEquals("cgroup v2 memory.max", m.source());
    }

    @Test
    void cgroupV2MaxMeansNoLimitSoPhysicalMemoryIsUsed() throws Exception {
        ContainerMemory m = read("v2max");
        assertEquals(24_683_472L * 1024, m.limitBytes());
        assertTrue(m.source().startsWith("physical memory"));
    }

    @Test
    void readsCgroupV1Limit() throws Exception {
        ContainerMemory m = read("v1");
        assertEquals(268_435_456L, m.limitBytes());
        assertEquals("cgroup v1 memory.limit_in_bytes", m.source());
    }

    @Test
    void cgroupV1HugeValueMeansNoLimit() throws Exception {
        assertEquals(24_683_472L * 1024, read("v1unlimited").limitBytes());
    }

    @Test
    void missingCgroupFilesFallBackToPhysicalMemory() throws Exception {
        ContainerMemory m = read("none");
        assertEquals(24_683_472L * 1024, m.limitBytes());
    }

    @Test
    void planSplitsAContainerLimitIntoHeapDirectAndBudget() {
        long gib = 1L << 30;
        MemoryPlan plan = MemoryPlan.forLimit(2 * gib, "test", 0);
        assertTrue(plan.heapBytes() + plan.directBytes() + plan.headroomBytes() <= 2 * gib, plan.describe());
        assertTrue(plan.budgetBytes() > gib, plan.describe());
        assertTrue(plan.jvmFlags().contains("-XX:MaxDirectMemorySize="), plan.jvmFlags());
        MemoryPlan explicit = MemoryPlan.forLimit(2 * gib, "test", 8L << 20);
        assertEquals(8L << 20, explicit.budgetBytes());
        assertTrue(explicit.directBytes() > explicit.budgetBytes());
    }
}
